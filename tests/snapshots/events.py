"""One canonical change per call (`insert`, `update`, `delete`, `truncate`), for compact snapshot tests."""

from __future__ import annotations

import datetime as dt

from cdc_pipelines.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA
from cdc_pipelines.snapshots.schema import STATE_SCHEMA

T0 = dt.datetime(2024, 1, 1)
TYPES = {"id": "INT", "name": "STRING", "amount": "DECIMAL", "flag": "BOOLEAN", "extra": "INT"}


def change(n: int, op: str, before=None, after=None, table="t", pk=("id",), seq=None, at=None, day="2024-01-01"):
    return {
        "event_id": f"e{day}-{n}", "source_format": "test", "source_topic": "test", "source_file": "f",
        "source_line": n, "op": op, "raw_op": op, "db": "db", "db_schema": None, "table_name": table,
        "event_time": at or T0 + dt.timedelta(seconds=n), "event_time_unit": "s", "sync_time": None,
        "tx_id": None, "seq": seq, "position": None, "pk_columns": list(pk) if pk else None,
        "before": before, "after": after,
        "column_types": {c: TYPES.get(c, "STRING") for c in (after or before or {})} or None,
        "source_types": None, "ddl": None, "meta": None, "dt": day,
    }  # fmt: skip


def insert(n, row, **kw):
    return change(n, "INSERT", after=row, **kw)


def update(n, before, after, **kw):
    return change(n, "UPDATE", before=before, after=after, **kw)


def delete(n, row, **kw):
    return change(n, "DELETE", before=row, **kw)


def truncate(n, **kw):
    return change(n, "TRUNCATE", pk=None, **kw)


def changes_df(spark, events):
    return spark.createDataFrame([tuple(e[c] for c in CANONICAL_COLUMNS) for e in events], CANONICAL_SCHEMA)


def empty_state(spark):
    return spark.createDataFrame([], STATE_SCHEMA).drop("dt")


def state_rows(state) -> dict:
    """{(table, key tuple): row dict} of a state DataFrame."""
    return {(r.table_name, tuple(r.key)): dict(r.row) for r in state.collect()}
