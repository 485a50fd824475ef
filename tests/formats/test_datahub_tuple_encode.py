"""DataHub TUPLE encoder: decode(encode(x)) == x on the seed rows; an update is a `U` pair."""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from tests.conftest import resource
from tests.formats.test_debezium_encode import SAME_FORMAT_FIELDS, same_events

CARRIED = ("op", "db", "table_name", "before", "after", "ddl")
LINEAGE = ("cdc.before_source_file", "cdc.before_source_line")  # the input file of the before row


def _without_lineage(events: list[dict]) -> list[dict]:
    return [e | {"meta": {k: v for k, v in (e["meta"] or {}).items() if k not in LINEAGE}} for e in events]


def _encode(event: dict) -> list[dict]:
    return [json.loads(m) for m in get_codec("datahub-tuple").encode(event, {})]


def test_same_format_round_trip_is_exact(roundtrip):
    """The seed table as JSON lines and as CSV (written back as JSON lines); TUPLE has no table name, so the
    `table` option names it both ways."""
    options = {"table": "orders"}
    events, again, counts = roundtrip(
        "datahub-tuple", resource("datahub-tuple"), "datahub-tuple", source_options=options, decode_options=options
    )
    assert len(events) == len(again) == 6 and counts == {"written": 8, "skipped": 0, "encoded": 6}
    assert same_events(_without_lineage(again), _without_lineage(events), SAME_FORMAT_FIELDS)


def test_update_is_a_u_pair(decode):
    events, _, _ = decode("dataworks-json", resource("dataworks-json", "seed-004.jsonl"))
    before, after = _encode(events[1])
    meta = ("_sequence_id_", "_operation_type_", "_excute_time_", "_source_table_", "_before_image_", "_after_image_")
    assert [tuple(row[k] for k in meta) for row in (before, after)] == [
        ("1605339516000000005", "U", "1605339934000", "example_table_pk", "Y", "N"),
        ("1605339516000000005", "U", "1605339934000", "example_table_pk", "N", "Y"),
    ]
    assert (before["comment"], after["comment"], after["id"]) == ("comment", "com1", 1)
    (insert,) = _encode(events[0])
    assert (insert["_operation_type_"], insert["_before_image_"], insert["_after_image_"]) == ("I", "N", "Y")
    (delete,) = _encode(events[2])
    assert (delete["_operation_type_"], delete["_before_image_"], delete["_after_image_"]) == ("D", "Y", "N")
    for event in events[3:]:  # the heartbeat and the DDL
        with pytest.raises(Unsupported):
            _encode(event)
    # an update without a sequence id gets a made-up one, shared by both rows
    before, after = _encode(events[1] | {"seq": None, "event_id": "12" * 16})
    assert before["_sequence_id_"] == after["_sequence_id_"] == str(int("12" * 7 + "1", 16))


@pytest.mark.parametrize(
    ("source", "name", "db", "skipped"),
    [
        ("dataworks-json", "seed-004.jsonl", "example_db", 2),  # the heartbeat and the DDL
        ("oms-default", "seed.jsonl", "tenant.database", 1),  # the DDL
    ],
)
def test_cross_format_round_trip(roundtrip, source, name, db, skipped):
    """TUPLE carries no database name: the `db` option gives it back (`_source_table_` is the table)."""
    events, again, counts = roundtrip(source, resource(source, name), "datahub-tuple", decode_options={"db": db})
    kept = [e for e in events if e["op"] in ("INSERT", "UPDATE", "DELETE")]
    assert len(events) - len(kept) == skipped and counts["skipped"] == skipped
    assert counts["written"] == len(kept) + sum(e["op"] == "UPDATE" for e in kept)  # an update is two rows
    assert same_events(again, kept, (*CARRIED, "event_time"))
