"""DataWorks Kafka JSON encoder: decode(encode(x)) == x on the seed examples; split and merged updates."""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.dataworks_json import ddl_op
from tests.conftest import resource
from tests.formats.test_debezium_encode import SAME_FORMAT_FIELDS, same_events

# The before half's input file is lineage of the message read, not something a message can carry: the
# re-decoded pair names the written file (and the line the before half has there).
LINEAGE = ("cdc.before_source_file", "cdc.before_source_line")


def _without_lineage(events: list[dict]) -> list[dict]:
    return [e | {"meta": {k: v for k, v in (e["meta"] or {}).items() if k not in LINEAGE}} for e in events]


def _encode(event: dict, **options) -> list[dict]:
    codec = get_codec("dataworks-json")
    return [json.loads(m) for m in codec.encode(event, codec.resolve_options(options))]


@pytest.fixture(scope="module")
def seed_002(decode):
    events, _, _ = decode("dataworks-json", resource("dataworks-json", "seed-002.jsonl"))
    return events


def test_same_format_round_trip_is_exact(roundtrip):
    """Both seeds (002 and 004): split and merged updates, heartbeats, a DDL with its opaque ddlMeta."""
    events, again, counts = roundtrip("dataworks-json", resource("dataworks-json"), "dataworks-json")
    assert len(events) == 10 and counts["skipped"] == 0
    assert counts["written"] == 12  # the two split updates are written split again
    assert counts["encoded"] == len(again) == 10
    assert same_events(_without_lineage(again), _without_lineage(events), SAME_FORMAT_FIELDS)
    split = [e for e in again if "cdc.before_raw_op" in (e["meta"] or {})]
    assert len(split) == 2 and all(e["meta"]["cdc.before_raw_op"] == "UPDATE_BEFOR" for e in split)


def test_split_and_merged_updates(seed_002):
    heartbeat, _, split, merged, _ = seed_002
    before, after = _encode(split)  # auto: a split pair is written split, sharing its sequenceId
    assert (before["payload"]["op"], after["payload"]["op"]) == ("UPDATE_BEFOR", "UPDATE_AFTER")
    assert before["payload"]["sequenceId"] == after["payload"]["sequenceId"] == "1620457642589000001"
    assert (before["payload"]["after"], after["payload"]["before"]) == (None, None)
    assert before["payload"]["before"]["dataColumn"] == {"name": "name11", "job": "job11", "sex": "man",
                                                         "#alibaba_rds_row_id#": 15}  # fmt: skip
    assert before["payload"]["timestamp"] == after["payload"]["timestamp"] == {
        "eventTime": 1620458077000, "systemTime": 1620458077779, "checkpointTime": 1620458077000,
    }  # fmt: skip
    (one,) = _encode(merged)  # ... and a merged one merged
    assert one["payload"]["op"] == "UPDATE_AFTER" and one["payload"]["before"] and one["payload"]["after"]
    (one,) = _encode(split, merged="true")
    assert (
        one["payload"]["before"]["dataColumn"]["sex"] == "man"
        and one["payload"]["after"]["dataColumn"]["sex"] == "woman"
    )
    assert len(_encode(merged, merged="false")) == 2
    (beat,) = _encode(heartbeat)
    assert beat["payload"]["op"] == "MHEARTBEAT" and beat["version"] == "0.0.1"
    assert beat["schema"] == {"dataColumn": None, "primaryKey": None, "source": None}
    # an update that carries no sequence id gets a made-up one, shared by both halves
    before, after = _encode(split | {"source_format": "oms-default", "seq": None, "event_id": "ab" * 16})
    assert before["payload"]["sequenceId"] == after["payload"]["sequenceId"] == str(int("ab" * 7 + "a", 16))


@pytest.mark.parametrize(("merged", "written"), [("false", 5), ("true", 4)])
def test_split_or_merged_updates_decode_alike(roundtrip, merged, written):
    """OMS Default's update, written split (two messages sharing a sequenceId) or merged, is one UPDATE again."""
    events, again, counts = roundtrip(
        "oms-default", resource("oms-default", "seed.jsonl"), "dataworks-json", merged=merged
    )
    assert counts == {"written": written, "skipped": 0, "encoded": 4}
    assert same_events(again, events, ("op", "db", "table_name", "before", "after", "ddl", "pk_columns"))
    (update,) = [e for e in again if e["op"] == "UPDATE"]
    assert update["raw_op"] == "UPDATE_AFTER" and ("cdc.before_raw_op" in update["meta"]) == (merged == "false")


def test_cross_format_with_typed_values(roundtrip):
    """Debezium with a schema: INT/DOUBLE as numbers, BYTES as base64, strings; the DDL-less seed is all kept."""
    events, again, counts = roundtrip("oms-debezium", resource("oms-debezium", "seed.jsonl"), "dataworks-json")
    assert counts == {"written": 4, "skipped": 0, "encoded": 3}  # the update is split
    assert same_events(again, events, ("op", "db", "table_name", "before", "after", "ddl", "event_time", "sync_time"))
    assert again[0]["column_types"]["c04"] == "BYTES" and again[0]["source_types"]["c09"] == "DOUBLE"


def test_value_types():
    event = {
        "event_id": "0" * 32, "source_format": "dts-avro", "op": "INSERT", "raw_op": "INSERT", "db": "d",
        "table_name": "t", "event_time": None, "sync_time": None, "before": None, "pk_columns": ["id"],
        "after": {"id": "10223372036854775806", "ok": "true", "price": "1.10", "at": "2020-05-24T10:14:29.5Z",
                  "raw": "aGk=", "day": "2020-05-24", "amount": "0.000000000000000000001", "n": None},
        "column_types": {"id": "INT", "ok": "BOOLEAN", "price": "DOUBLE", "at": "TIMESTAMP", "raw": "BYTES",
                         "day": "DATE", "amount": "DECIMAL", "n": "UNKNOWN"},
        "meta": {},
    }  # fmt: skip
    (message,) = _encode(event)
    line = get_codec("dataworks-json").encode(event, {})[0]
    assert '"id":10223372036854775806' in line and '"price":1.10' in line and '"at":1590315269500' in line
    assert message["payload"]["after"]["dataColumn"] | {"id": None, "price": None, "at": None} == {
        "id": None, "ok": True, "price": None, "at": None, "raw": "aGk=", "day": "2020-05-24",
        "amount": "0.000000000000000000001", "n": None,
    }  # fmt: skip
    assert {c["name"]: c["type"] for c in message["schema"]["dataColumn"]} == {
        "id": "LONG", "ok": "BOOLEAN", "price": "DOUBLE", "at": "DATE", "raw": "BYTES", "day": "STRING",
        "amount": "DOUBLE", "n": "STRING",
    }  # fmt: skip
    assert message["payload"]["timestamp"] == {"eventTime": -1, "checkpointTime": -1}


@pytest.mark.parametrize(
    ("ddl", "op"),
    [
        ("alter table t add column c int", "ALTER"),
        ("CREATE TABLE t (id int)", "CREATE"),
        ("create unique index i on t (c)", "CINDEX"),
        ("DROP INDEX i ON t", "DINDEX"),
        ("/* x */ drop table t", "ERASE"),
        ("rename table a to b", "RENAME"),
        ("truncate table t", "QUERY"),
    ],
)
def test_ddl_op(ddl, op):
    assert ddl_op(ddl) == op
