"""Debezium, DebeziumFlatten and DebeziumSmt encoders: decode(encode(x)) == x on the seed examples."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdc_pipelines.formats import get_codec
from tests.conftest import SAME_FORMAT_FIELDS, carried, resource
from tests.formats.test_debezium import DECLARED, TEMPORAL

DECLARED_OPTIONS = {"column_types": DECLARED}


def same_events(left: list[dict], right: list[dict], fields=SAME_FORMAT_FIELDS) -> bool:
    """Equal as multisets on `fields`: a paired split update is emitted after the unpaired events, so the
    order of re-encoded messages need not follow the input order."""

    def key(e):
        return json.dumps(carried(e, fields), sort_keys=True, default=str)

    return sorted(map(key, left)) == sorted(map(key, right))


def _encode(format_id: str, event: dict, **options) -> list[dict]:
    codec = get_codec(format_id)
    return [json.loads(m) for m in codec.encode(event, codec.resolve_options(options))]


@pytest.mark.parametrize(
    ("format_id", "name", "options"),
    [
        ("oms-debezium", "seed.jsonl", {}),  # schema + payload: the schema is written back (schema=auto)
        ("oms-debezium", "seed-payload-only.jsonl", DECLARED_OPTIONS),  # typed: days/micros/millis/base16 back
        ("oms-debezium-flatten", "seed.jsonl", DECLARED_OPTIONS),
        ("oms-debezium-smt", "seed.jsonl", {"db": "d1", "table": "t1"}),  # db/table come from the options
    ],
)
def test_same_format_round_trip_is_exact(roundtrip, format_id, name, options):
    events, again, counts = roundtrip(
        format_id, resource(format_id, name), format_id, source_options=options, decode_options=options
    )
    assert counts["skipped"] == 0 and counts["written"] == len(events) == 3
    assert [carried(e, SAME_FORMAT_FIELDS) for e in again] == [carried(e, SAME_FORMAT_FIELDS) for e in events]


def test_flatten_twin_with_schema_needs_no_declared_types(roundtrip):
    """Flatten -> Debezium is a same-family trip (source, ts_ms written back); schema=true names
    DATE/TIME/DATETIME/TIMESTAMP, so a decoder without `column_types` converts them back."""
    events, again, _ = roundtrip(
        "oms-debezium-flatten",
        resource("oms-debezium-flatten", "seed.jsonl"),
        "oms-debezium",
        source_options=DECLARED_OPTIONS,
        schema="true",
    )
    # the schema now gives every column a type, and is recorded in source_types / meta cdc.schema
    fields = tuple(f for f in SAME_FORMAT_FIELDS if f not in ("column_types", "source_types", "meta"))
    assert [carried(e, fields) for e in again] == [carried(e, fields) for e in events]
    assert {k: again[0]["after"][k] for k in TEMPORAL} == TEMPORAL
    assert {k: again[0]["column_types"][k] for k in TEMPORAL} == {
        "c21": "TIMESTAMP", "c22": "DATE", "c23": "TIME", "c24": "DATETIME",
    }  # fmt: skip
    assert again[0]["source_types"]["c23"] == "int64 io.debezium.time.MicroTime"
    assert again[0]["source_types"]["c24"] == "int64 io.debezium.time.Timestamp"
    assert again[0]["meta"] == events[0]["meta"] | {"cdc.schema": "true"}


def test_written_message_follows_the_oms_type_table(decode):
    events, _, _ = decode("oms-debezium", resource("oms-debezium", "seed-payload-only.jsonl"), **DECLARED_OPTIONS)
    (message,) = _encode("oms-debezium", events[0])
    payload = message["payload"]
    after = payload["after"]
    assert (after["c22"], after["c23"], after["c24"], after["c21"]) == (
        19311, 36060000000, 1668489131000, "2022-11-15T05:12:11Z",
    )  # fmt: skip
    assert (after["c04"], after["c20"]) == ("61", "6A")  # base16, as OMS writes BYTES
    assert payload["op"] == "c" and payload["source"]["ts_ms"] == 1668491621000 and payload["ts_ms"] == 1668495423594
    assert _encode("oms-debezium", events[0], binary="base64")[0]["payload"]["after"]["c04"] == "YQ=="
    # DATETIME with microseconds gets MicroTimestamp in a written schema, so no digit is cut
    event = events[0] | {"after": events[0]["after"] | {"c24": "2022-11-15 05:12:11.000007"}}
    (message,) = _encode("oms-debezium", event, schema="true")
    (column,) = [f for f in message["schema"]["fields"][1]["fields"] if f["field"] == "c24"]
    assert (
        column["name"] == "io.debezium.time.MicroTimestamp" and message["payload"]["after"]["c24"] == 1668489131000007
    )


def test_built_source_block_heartbeat_and_skipped_ddl(decode):
    events, _, _ = decode("dataworks-json", resource("dataworks-json", "seed-004.jsonl"))
    (insert,) = _encode("oms-debezium", events[0])
    assert insert["payload"]["source"] == {
        "version": "", "connector": "OB_MYSQL", "name": "OMS", "ts_ms": 1605339932000, "db": "example_db",
        "table": "example_table_pk",
    }  # fmt: skip
    assert (insert["payload"]["op"], insert["payload"]["ts_ms"], insert["payload"]["after"]["id"]) == (
        "c", 1605339932736, 1,
    )  # fmt: skip
    (heartbeat,) = _encode("oms-debezium-flatten", events[3])
    assert (heartbeat["op"], heartbeat["before"], heartbeat["after"]) == ("HEARTBEAT", None, None)
    with pytest.raises(Exception, match="no DDL event"):
        _encode("oms-debezium", events[4])
    (smt,) = _encode("oms-debezium-smt", events[0])  # OMS's own DebeziumSmt: the row and __deleted only
    assert smt == {"name": "joe", "comment": "comment", "id": 1, "__deleted": "false"}
    (smt,) = _encode("oms-debezium-smt", events[2], add_fields="op,table,source.ts_ms")
    assert smt == {"name": "joe", "comment": "com1", "id": 1, "__deleted": "true", "__op": "d",
                   "__table": "example_table_pk", "__source_ts_ms": 1605339937000}  # fmt: skip


@pytest.mark.parametrize(
    ("source", "path", "target", "options", "skipped"),
    [
        # both DataWorks seeds: the two DDL events are skipped (OMS Debezium has no DDL event)
        ("dataworks-json", resource("dataworks-json"), "oms-debezium", {}, 1),
        ("oms-default", resource("oms-default", "seed.jsonl"), "oms-debezium-flatten", {}, 1),
        # DATE/TIMESTAMP/DECIMAL/INT from DTS Avro come back exactly through a written schema
        ("dts-avro", resource("dts-avro", "seed.jsonl"), "oms-debezium", {"schema": "true"}, 1),
    ],
)
def test_cross_format_round_trip(roundtrip, source, path, target, options, skipped):
    events, again, counts = roundtrip(source, path, target, **options)
    kept = [e for e in events if e["op"] != "DDL"]
    assert len(events) - len(kept) == skipped
    assert counts["skipped"] == skipped and counts["written"] == len(kept) == len(again)
    assert same_events(again, kept, ("op", "db", "table_name", "before", "after", "ddl", "position", "tx_id"))


def test_smt_cross_format(roundtrip):
    """SMT keeps the after row (the before row for a delete); add_fields keeps op, db, table and time."""
    source = resource("dataworks-json", "seed-004.jsonl")
    events, again, counts = roundtrip(
        "dataworks-json", source, "oms-debezium-smt", add_fields="op,db,table,source.ts_ms"
    )
    kept = [e for e in events if e["op"] in ("INSERT", "UPDATE", "DELETE")]
    assert counts["skipped"] == 2 and len(again) == len(kept) == 3  # the heartbeat and the DDL
    expected = [carried(e) | {"before": e["before"] if e["op"] == "DELETE" else None} for e in kept]
    assert same_events(again, expected, ("op", "db", "table_name", "before", "after", "ddl"))
    assert sorted(e["event_time"] for e in again) == sorted(e["event_time"] for e in kept)
    assert min(e["event_time"] for e in again) == dt.datetime(2020, 11, 14, 7, 45, 32)
