"""DataWorks 2.0 JSON as OMS writes it (seed 000)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import resource
from tests.formats.seed_values import TINY_DECIMAL

ROW = {
    "col1": "3",
    "col2": "129",
    "col3": "2147483646",
    "col4": "9223372036854775806",
    "col5": "1.2222",
    "col6": TINY_DECIMAL,
    "col7": "10223372036854775806",
    "col8": "1",
    "col9": "hello world",
    "col10": "aGVsbG8gd29ybGQ=",
    "col11": TINY_DECIMAL,
    "col12": "2020-11-25",
    "col13": "00:01:02",
    "col14": "2020-11-25 00:01:02",
    "col15": "1606233662.012345",
    "col16": "2020-11-25 00:01:02.012345 Asia/Shanghai",
    "col17": "INTERVAL '3' DAY",
    "col18": "INTERVAL '4' YEAR",
}
SCHEMA_TYPES = {
    "int8": "INT",
    "int16": "INT",
    "int32": "INT",
    "int64": "INT",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "bigInt": "INT",
    "boolean": "BOOLEAN",
    "string": "STRING",
    "bytes": "BYTES",
    "decimal": "DECIMAL",
    "localDate": "DATE",
    "localTime": "TIME",
    "localDateTime": "DATETIME",
    "timestamp": "TIMESTAMP",
    "zonedDateTime": "ZONED_DATETIME",
    "intervalDayToSecond": "INTERVAL",
    "intervalYearToMonth": "INTERVAL",
}


@pytest.fixture(scope="module")
def seed(decode):
    return decode("oms-dataworks", resource("oms-dataworks", "seed.jsonl"))


def test_rows(seed):
    events, rejects, _ = seed
    assert rejects == []
    assert [(e["op"], e["raw_op"]) for e in events] == [
        ("INSERT", "INSERT"),
        ("UPDATE", "UPDATE"),
        ("DELETE", "DELETE"),
        ("DDL", "ALTER"),
        ("HEARTBEAT", "HEARTBEAT"),
    ]
    insert, update, delete = events[:3]
    assert (insert["before"], insert["after"]) == (None, ROW)
    assert (update["before"], update["after"]) == (ROW, ROW | {"col9": "hello world 2020"})
    assert (delete["before"], delete["after"]) == (ROW, None)
    assert insert["pk_columns"] == ["pkName1", "pkName12"] and update["pk_columns"] == ["pkName1", "pkName2"]
    for e in (insert, update, delete):
        assert (e["db"], e["db_schema"], e["table_name"]) == ("db", None, "tab")
        assert {k: v for k, v in e["column_types"].items() if not k.startswith("col")} == SCHEMA_TYPES
        assert e["source_types"]["zonedDateTime"] == "ZONED_DATETIME"
        assert e["meta"]["extend.load_fm"] == "test"
        assert e["meta"]["scn"] == "null" and e["position"] is None
        assert e["event_time_unit"] == "ms"
    assert insert["event_time"] == dt.datetime(2022, 3, 18, 5, 23, 20)
    assert insert["sync_time"] == dt.datetime(2022, 3, 18, 5, 23, 20, 795000)
    assert insert["meta"]["checkpointTime"] == "1647581000"


def test_ddl_and_heartbeat(seed):
    ddl, heartbeat = seed[0][3:]
    assert ddl["ddl"].startswith("alter table connector_test.all_mysql_type_test add column c90 varchar(30)")
    assert (ddl["db"], ddl["table_name"], ddl["before"], ddl["after"]) == (
        "connector_test",
        "all_mysql_type_test",
        None,
        None,
    )
    assert (heartbeat["event_time"], heartbeat["event_time_unit"]) == (dt.datetime(2021, 5, 8, 7, 7, 39), "ms")
    assert (heartbeat["table_name"], heartbeat["before"], heartbeat["after"]) == (None, None, None)


def test_typed_values_are_normalised(decode, tmp_path):
    line = (
        '{"version":"2.0","schema":{"source":{"dbType":"mysql","dbName":"d","schema":"s","table":"t"},'
        '"column":[{"name":"ts","type":"TIMESTAMP"},{"name":"ts13","type":"timestamp(9)"},{"name":"ok","type":"BOOLEAN"},'
        '{"name":"n","type":"decimal(65,30)"}],"pk":["n"]},"payload":{"before":null,"after":{"data":'
        '{"ts":"1606233662.012345","ts13":1590315269000.123456789,"ok":1,"n":123456789012345678901234567890.000000000000000000000000000001}},'
        '"op":"INSERT","timestamp":{"eventTime":1620457659000},"ddl":null,"scn":"42"}}'
    )
    path = tmp_path / "typed.jsonl"
    path.write_text(line + "\n")
    events, rejects, _ = decode("oms-dataworks", path)
    assert rejects == []
    (event,) = events
    assert event["after"] == {
        "ts": "2020-11-24T16:01:02.012345Z",
        "ts13": "2020-05-24T10:14:29.123456789Z",
        "ok": "true",
        "n": "123456789012345678901234567890.000000000000000000000000000001",
    }
    assert (event["db_schema"], event["position"]) == ("s", "42")
