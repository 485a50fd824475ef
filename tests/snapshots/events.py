"""One canonical change per call (`insert`, `update`, `delete`, `truncate`), for compact snapshot tests."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa

from cdc_pipelines.lake.delta_rs import arrow_schema
from cdc_pipelines.model.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA
from cdc_pipelines.snapshots.effects import table_text

CANONICAL_ARROW = arrow_schema(CANONICAL_SCHEMA)

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


KEYS_SCHEMA = "db string, db_schema string, table_name string, _t string, _k string, _shard string"


def key_text(key: tuple) -> str:
    """A key as `_cdc_key` holds it (Spark's JSON of the key values)."""
    return json.dumps(list(key), separators=(",", ":"))


def live_rows(state: dict) -> list[tuple]:
    """The previous keys of a {(table, key tuple): row} state, as `(TABLE..., _t, _k, _shard)` rows (no
    shard); a table is its name (in database `db`) or `(db, name)`."""
    tables = [(t if isinstance(t, tuple) else ("db", t), k) for t, k in state]
    return [(d, None, t, table_text((d, None, t)), key_text(k), None) for (d, t), k in tables]


def live_keys(spark, state: dict):
    """The previous keys `folds.apply_day` takes, from a {(table, key tuple): row} state."""
    return spark.createDataFrame(live_rows(state), KEYS_SCHEMA)


def changes_arrow(events: list[dict]) -> pa.Table:
    """`changes_df`'s rows as Arrow, without Spark (the local engine's input)."""
    return pa.Table.from_pylist([{c: e[c] for c in CANONICAL_COLUMNS} for e in events], CANONICAL_ARROW)


def folded(state: dict, applied) -> dict:
    """`state` ({(table, key tuple): row dict}) after the day's net effects, as the current table's MERGE does it."""
    truncated = {t["table_name"] for t in applied.tables if t["truncated"]}
    state = {k: v for k, v in state.items() if k[0] not in truncated}
    for r in applied.net:
        key = (r.table_name, tuple(json.loads(r._k)))
        if r.kind == "set":
            state[key] = dict(r.row)
        else:
            state.pop(key, None)
    return state
