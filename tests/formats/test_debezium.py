"""Debezium, DebeziumFlatten and DebeziumSmt as OMS writes them (seed 000)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import resource
from tests.formats.seed_values import C19_BASE64, C19_HEX

RAW_AFTER_INSERT = {
    "c01": "2",
    "c02": "12312",
    "c03": "1241.41000",
    "c04": "61",
    "c05": "11",
    "c06": "141",
    "c07": "4241",
    "c08": "412124124",
    "c09": "2.11111",
    "c10": "2.4212412",
    "c11": "a",
    "c12": "b",
    "c13": "c",
    "c14": "d",
    "c15": "65",
    "c16": "f",
    "c17": "67",
    "c18": "68",
    "c19": C19_HEX,
    "c20": "6A",
    "c21": "2022-11-15T05:12:11Z",
    "c22": "19311",
    "c23": "36060000000",
    "c24": "1668489131000",
    "c25": "2022",
    "c26": "6B",
}
BYTES = {"c04": "YQ==", "c15": "ZQ==", "c17": "Zw==", "c18": "aA==", "c19": C19_BASE64, "c20": "ag==", "c26": "aw=="}
TYPED_INSERT = RAW_AFTER_INSERT | BYTES
DECLARED = (
    "c21:TIMESTAMP,c22:DATE,c23:TIME,c24:DATETIME,c04:BYTES,c15:BYTES,c17:BYTES,c18:BYTES,c19:BYTES,c20:BYTES,c26:BYTES"
)
TEMPORAL = {
    "c21": "2022-11-15T05:12:11Z",
    "c22": "2022-11-15",
    "c23": "10:01:00.000000",
    "c24": "2022-11-15 05:12:11.000",
}


@pytest.fixture(scope="module")
def with_schema(decode):
    return decode("oms-debezium", resource("oms-debezium", "seed.jsonl"))


def test_with_schema(with_schema):
    events, rejects, _ = with_schema
    assert rejects == []
    insert, update, delete = events
    assert [(e["op"], e["raw_op"]) for e in events] == [("INSERT", "c"), ("UPDATE", "u"), ("DELETE", "d")]
    assert (insert["before"], insert["after"]) == (None, TYPED_INSERT)
    assert update["before"] == TYPED_INSERT | {"c01": "1"}
    assert update["after"] == TYPED_INSERT | {"c01": "1", "c11": "aa"}
    assert (delete["before"], delete["after"]) == (TYPED_INSERT | {"c01": "1", "c11": "aa"}, None)
    types = insert["column_types"]
    # a bare int32/int64 in the schema stays an integer: no logical name says it is a date
    assert (types["c22"], types["c23"], types["c04"], types["c10"], types["c02"]) == (
        "INT",
        "INT",
        "BYTES",
        "DOUBLE",
        "STRING",
    )
    assert insert["source_types"]["c05"] == "int16"
    assert (insert["db"], insert["table_name"], insert["position"]) == ("test", "table_name", "703223@166849****")
    assert (insert["event_time"], insert["event_time_unit"]) == (dt.datetime(2022, 11, 15, 5, 53, 41), "ms")
    assert insert["sync_time"] == dt.datetime(2022, 11, 15, 6, 57, 3, 594000)
    assert insert["meta"]["source.connector"] == "OB_MYSQL" and insert["meta"]["cdc.schema"] == "true"


def test_payload_only_with_declared_types(decode):
    events, rejects, _ = decode(
        "oms-debezium", resource("oms-debezium", "seed-payload-only.jsonl"), column_types=DECLARED
    )
    assert rejects == []
    insert = events[0]
    assert insert["after"] == TYPED_INSERT | TEMPORAL
    assert {k: insert["column_types"][k] for k in TEMPORAL} == {
        "c21": "TIMESTAMP",
        "c22": "DATE",
        "c23": "TIME",
        "c24": "DATETIME",
    }
    assert insert["column_types"]["c01"] == "UNKNOWN"


def test_payload_only_without_types_keeps_raw_text(decode):
    events, _, _ = decode("oms-debezium", resource("oms-debezium", "seed-payload-only.jsonl"))
    assert events[0]["after"] == RAW_AFTER_INSERT


def test_flatten(decode):
    events, rejects, _ = decode(
        "oms-debezium-flatten", resource("oms-debezium-flatten", "seed.jsonl"), column_types=DECLARED
    )
    assert rejects == []
    assert [e["op"] for e in events] == ["INSERT", "UPDATE", "DELETE"]
    assert events[0]["after"] == TYPED_INSERT | TEMPORAL
    assert events[1]["before"]["c11"] == "a" and events[1]["after"]["c11"] == "aa"
    assert events[2]["after"] is None and events[2]["before"]["c01"] == "1"
    assert events[2]["sync_time"] == dt.datetime(2022, 11, 15, 7, 8, 39, 717000)


def test_logical_names_in_schema_convert(decode, tmp_path):
    line = (
        '{"schema":{"type":"struct","fields":[{"field":"after","type":"struct","fields":['
        '{"field":"d","type":"int32","name":"io.debezium.time.Date"},'
        '{"field":"t","type":"int64","name":"io.debezium.time.MicroTime"},'
        '{"field":"ts","type":"int64","name":"io.debezium.time.Timestamp"},'
        '{"field":"mts","type":"int64","name":"io.debezium.time.MicroTimestamp"},'
        '{"field":"z","type":"string","name":"io.debezium.time.ZonedTimestamp"},'
        '{"field":"b","type":"bytes"},{"field":"n","type":"int64"}]}]},'
        '"payload":{"op":"r","before":null,"after":{"d":-1,"t":45296000001,"ts":1668489131007,'
        '"mts":1668489131000007,"z":"2022-11-15T05:12:11.5Z","b":"AQID","n":19311},'
        '"source":{"db":"inventory","table":"p","ts_ms":0,"file":"bin.000003","pos":154},"ts_ms":1668495423594}}'
    )
    path = tmp_path / "dbz.jsonl"
    path.write_text(line + "\n")
    events, rejects, _ = decode("oms-debezium", path, binary="base64")
    assert rejects == []
    (event,) = events
    assert (event["op"], event["raw_op"], event["position"]) == ("INSERT", "r", "bin.000003:154")
    assert event["after"] == {
        "d": "1969-12-31",
        "t": "12:34:56.000001",
        "ts": "2022-11-15 05:12:11.007",
        "mts": "2022-11-15 05:12:11.000007",
        "z": "2022-11-15T05:12:11.5Z",
        "b": "AQID",
        "n": "19311",
    }


def test_smt(decode):
    events, rejects, _ = decode("oms-debezium-smt", resource("oms-debezium-smt", "seed.jsonl"), table="t1", db="d1")
    assert rejects == []
    assert [(e["op"], e["raw_op"]) for e in events] == [
        ("UPSERT", "__deleted=false"),
        ("UPSERT", "__deleted=false"),
        ("DELETE", "__deleted=true"),
    ]
    row = {"field1": "after_value1", "field2": "after_value2"}
    assert [(e["before"], e["after"]) for e in events] == [(None, row), (None, row), (row, None)]
    assert all((e["db"], e["table_name"], e["meta"]["__deleted"]) == ("d1", "t1", e["raw_op"][10:]) for e in events)
