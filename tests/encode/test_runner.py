"""The encode runner's Arrow -> event conversion gives encoders what pyarrow's own conversion gives."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines.encode.runner import _UNREAD, _events
from cdc_pipelines.model.schema import CANONICAL_SCHEMA

UTC = dt.UTC
TYPES = {"id": "INT", "name": "STRING", "at": "TIMESTAMP"}


def _event(n: int, event_time: dt.datetime | None) -> dict:
    return {
        "event_id": f"e{n}", "source_format": "oms-canal", "source_topic": "t", "source_file": "f",
        "source_line": n, "op": "UPDATE", "raw_op": "UPDATE", "db": "d", "db_schema": None, "table_name": "t",
        "event_time": event_time, "event_time_unit": "ms", "sync_time": None, "tx_id": None, "seq": str(n),
        "position": None, "pk_columns": ["id"], "before": {"id": str(n), "name": None},
        "after": {"id": str(n), "name": "x"}, "column_types": dict(TYPES), "source_types": {"id": "int"},
        "ddl": None, "meta": {"cdc.row_index": "0"} if n % 2 else None, "dt": "2024-01-01",
    }  # fmt: skip


def test_events_equal_pyarrows_conversion_times_in_utc_and_types_shared():
    times = [
        dt.datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
        None,
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        dt.datetime(1, 1, 1, tzinfo=UTC),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ]
    rows = [_event(n, t) for n, t in enumerate(times)]
    batch = pa.RecordBatch.from_pylist(rows, schema=to_arrow_schema(CANONICAL_SCHEMA, timezone="UTC"))
    expected = [{k: v for k, v in row.items() if k not in _UNREAD} for row in batch.to_pylist()]
    for row in expected:  # pyarrow gives maps as lists of pairs
        for name in ("before", "after", "column_types", "source_types", "meta"):
            row[name] = None if row[name] is None else dict(row[name])

    events = _events(batch)

    assert events == expected
    assert [e["event_time"] for e in events] == times
    assert all(e["event_time"].utcoffset() == dt.timedelta(0) for e in events if e["event_time"])
    assert events[0]["column_types"] is events[4]["column_types"]  # one dict per table, read only
