"""DataWorks 2.0 (OMS) encoder: decode(encode(x)) == x, and the emitted JSON is the seed's."""

from __future__ import annotations

import datetime as dt

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from tests.conftest import CARRIED_EVERYWHERE, SAME_FORMAT_FIELDS, bag, parse, resource
from tests.decode.oracles import encode_local
from tests.formats.seed_values import TINY_DECIMAL


def test_same_format_round_trip_is_exact(roundtrip):
    events, again, counts = roundtrip("oms-dataworks", resource("oms-dataworks", "seed.jsonl"), "oms-dataworks")
    assert counts == {"written": 5, "skipped": 0, "encoded": 5} and len(again) == 5
    assert bag(again, (*SAME_FORMAT_FIELDS, "db_schema")) == bag(events, (*SAME_FORMAT_FIELDS, "db_schema"))


def test_emitted_json_is_the_seed_message(decode):
    path = resource("oms-dataworks", "seed.jsonl")
    events, _, _ = decode("oms-dataworks", path)
    encoded, _ = encode_local(events, "oms-dataworks")
    messages = [message for _, _, message in sorted(encoded, key=lambda r: (r[0]["source_line"], r[1]))]
    assert [parse(m) for m in messages] == [parse(line) for line in path.read_text().splitlines() if line.strip()]
    # numbers keep their digits (never through a float or a long), stamps stay 13-digit numbers
    assert '"col7":10223372036854775806' in messages[0] and f'"col6":{TINY_DECIMAL}' in messages[0]
    assert '"eventTime":1647581000000' in messages[0] and '"checkpointTime":1647581000' in messages[0]


@pytest.mark.parametrize(("source", "name"), [("oms-canal", "seed.jsonl"), ("dataworks-json", "seed-002.jsonl")])
def test_cross_format_round_trip(roundtrip, source, name):
    events, again, counts = roundtrip(source, resource(source, name), "oms-dataworks")
    # DataWorks 2.0 has every op of these seeds (DataWorks Kafka JSON's MHEARTBEAT becomes HEARTBEAT)
    assert counts["skipped"] == 0 and counts["written"] == len(again) == len(events)
    assert bag(again, CARRIED_EVERYWHERE) == bag(events, CARRIED_EVERYWHERE)
    # schema.column, pk and the 13-digit stamps carry the logical types, PK names and times too
    fields = ("pk_columns", "column_types", "event_time", "sync_time")
    assert bag(again, CARRIED_EVERYWHERE + fields) == bag(events, CARRIED_EVERYWHERE + fields)
    if source == "oms-canal":  # TIMESTAMP went out as OMS `sec.fraction` text and came back exact
        insert = next(e for e in again if e["op"] == "INSERT")
        assert (insert["after"]["col14"], insert["source_types"]["col14"]) == (
            "2020-11-24T16:01:02.012345Z",
            "TIMESTAMP",
        )


def _event(**fields) -> dict:
    event = {
        "source_format": "oms-canal", "op": "INSERT", "raw_op": "INSERT", "db": "shop", "db_schema": "s",
        "table_name": "orders", "event_time": dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC),
        "event_time_unit": "ms", "sync_time": None, "tx_id": None, "seq": None, "position": "77",
        "pk_columns": ["id"], "before": None, "after": None, "column_types": None, "source_types": None,
        "ddl": None, "meta": None,
    }  # fmt: skip
    return event | fields


def test_cross_format_envelope_field_by_field():
    after = {"id": "1", "ok": "true", "at": "2020-11-24T16:01:02.012345Z", "n": "x"}
    types = {"id": "INT", "ok": "BOOLEAN", "at": "TIMESTAMP", "n": "UNKNOWN"}
    text = get_codec("oms-dataworks").encode(
        _event(after=after, column_types=types, meta={"cdc.json_numbers": '["id"]'}), {}
    )[0]
    assert parse(text) == {
        "version": "2.0",
        "schema": {
            "source": {"dbType": None, "dbVersion": None, "dbName": "shop", "schema": "s", "table": "orders"},
            "column": [{"name": "id", "type": "BIGINT"}, {"name": "ok", "type": "BOOLEAN"},
                       {"name": "at", "type": "TIMESTAMP"}],
            "pk": ["id"],
        },
        "payload": {
            "before": None, "after": {"data": {"id": "1", "ok": "true", "at": "1606233662.012345", "n": "x"}},
            "op": "INSERT", "timestamp": {"eventTime": "1704164645678"}, "ddl": None, "scn": "77",
        },
        "extend": {},
    }  # fmt: skip
    assert '"id":1' in text


@pytest.mark.parametrize(
    ("fields", "op"),
    [
        ({"op": "TX_BEGIN", "raw_op": "BEGIN", "pk_columns": None}, "TRANSACTION_BEGIN"),
        ({"op": "TX_END", "raw_op": "COMMIT", "pk_columns": None}, "TRANSACTION_END"),
        ({"op": "OTHER", "raw_op": "GTID", "pk_columns": None}, "GTID"),
        ({"op": "TRUNCATE", "raw_op": "TRUNCATE", "pk_columns": None}, "TRUNCATE"),
        ({"op": "DDL", "raw_op": "ALTER", "ddl": "ALTER TABLE t ADD c INT"}, "ALTER"),
        ({"op": "DDL", "raw_op": "DROP COLUMN", "ddl": "ALTER TABLE t DROP c"}, "QUERY"),
    ],
)
def test_control_ops(fields, op):
    message = parse(get_codec("oms-dataworks").encode(_event(**fields), {})[0])
    assert message["payload"]["op"] == op
    assert message["payload"]["ddl"] == ({"text": fields["ddl"]} if "ddl" in fields else None)


def test_heartbeat_is_version_and_payload_only():
    heartbeat = _event(source_format="dataworks-json", op="HEARTBEAT", raw_op="MHEARTBEAT", table_name=None)
    message = parse(get_codec("oms-dataworks").encode(heartbeat, {})[0])
    assert message == {"version": "2.0", "payload": {"timestamp": {"eventTime": "1704164645678"}, "op": "HEARTBEAT"}}


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"op": "UPSERT", "after": {"id": "1"}}, "DataWorks 2.0 has no UPSERT op"),
        ({"op": "OTHER", "raw_op": "MERGE"}, "DataWorks 2.0 has no OTHER op"),
        ({"op": "UPDATE", "after": {"id": "1"}}, "UPDATE without a before image"),
        ({"op": "DELETE", "before": {"id": "1"}, "table_name": None}, "row change without a table name"),
    ],
)
def test_what_dataworks_cannot_carry(fields, reason):
    with pytest.raises(Unsupported, match=reason):
        get_codec("oms-dataworks").encode(_event(**fields), {})
