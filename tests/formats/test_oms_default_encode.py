"""OMS Default / DefaultExtendColumnType encoders: decode(encode(x)) == x on the seed examples."""

from __future__ import annotations

import pytest

from tests.conftest import carried, resource

SAME_FORMAT_FIELDS = (
    "op", "raw_op", "db", "table_name", "event_time", "event_time_unit", "pk_columns", "before", "after",
    "column_types", "source_types", "ddl", "meta", "tx_id", "seq", "position",
)  # fmt: skip


@pytest.mark.parametrize("format_id", ["oms-default", "oms-default-extend"])
def test_same_format_round_trip_is_exact(roundtrip, format_id):
    events, again, counts = roundtrip(format_id, resource(format_id, "seed.jsonl"), format_id)
    assert counts["skipped"] == 0 and counts["written"] == len(events) == 4
    assert [carried(e, SAME_FORMAT_FIELDS) for e in again] == [carried(e, SAME_FORMAT_FIELDS) for e in events]


def test_default_to_extend_carries_rows_and_pk(roundtrip):
    events, again, _ = roundtrip("oms-default", resource("oms-default", "seed.jsonl"), "oms-default-extend")
    fields = ("op", "db", "table_name", "pk_columns", "before", "after", "ddl", "event_time")
    assert [carried(e, fields) for e in again] == [carried(e, fields) for e in events]
    assert again[0]["meta"]["record_primary_value"] == "3\u0001" + "129"
