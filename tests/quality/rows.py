"""Hand-built canonical events: one clean oms-canal INSERT by default, overridden field by field."""

from __future__ import annotations

import datetime as dt
import itertools

from cdc_pipelines.model.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA
from cdc_pipelines.quality import Partition

DT = "2024-01-01"
NOW = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
_ids = itertools.count(1)


def event(**fields) -> dict:
    """A canonical row; `fields` replace the defaults (a clean INSERT of shop.orders id=1)."""
    n = next(_ids)
    row = {
        "event_id": f"e{n:04d}",
        "source_format": "oms-canal",
        "source_topic": "orders",
        "source_file": "file:/x/part-0.jsonl",
        "source_line": n,
        "op": "INSERT",
        "raw_op": "INSERT",
        "db": "shop",
        "db_schema": None,
        "table_name": "orders",
        "event_time": dt.datetime(2024, 1, 1, 10, 0, 0, tzinfo=dt.UTC),
        "event_time_unit": "ms",
        "sync_time": dt.datetime(2024, 1, 1, 10, 0, 1, tzinfo=dt.UTC),
        "tx_id": None,
        "seq": None,
        "position": None,
        "pk_columns": ["id"],
        "before": None,
        "after": {"id": "1", "name": "a", "created": "2024-01-01 10:00:00.123"},
        "column_types": {"id": "INT", "name": "STRING", "created": "DATETIME"},
        "source_types": {"id": "bigint", "name": "varchar(10)", "created": "datetime(3)"},
        "ddl": None,
        "meta": {},
        "dt": DT,
    }
    unknown = set(fields) - set(row)
    assert not unknown, unknown
    row.update(fields)
    return row


def clean_events() -> list[dict]:
    """One clean event of every op the rules look at."""
    image = {"id": "1", "name": "a", "created": "2024-01-01 10:00:00.123"}
    return [
        event(),
        event(op="UPDATE", before=image, after={**image, "name": "b"}),
        event(op="DELETE", before={**image, "name": "b"}, after=None),
        event(op="DDL", ddl="ALTER TABLE orders ADD c INT", after=None, pk_columns=None, column_types=None),
        event(op="HEARTBEAT", after=None, table_name=None, db=None, pk_columns=None, column_types=None),
    ]


def frame(spark, rows: list[dict]):
    """A DataFrame of canonical rows (give datetimes a tzinfo: naive ones would be read as local time)."""
    return spark.createDataFrame([tuple(r[c] for c in CANONICAL_COLUMNS) for r in rows], CANONICAL_SCHEMA)


def partition(spark, rows: list[dict], recorded: dict | None = None, rejects: list[dict] | None = None) -> Partition:
    """A Partition of `rows`; by default the run recorded exactly one message per event, no rejects."""
    from cdc_pipelines.model.schema import REJECTS_COLUMNS, REJECTS_SCHEMA

    reject_rows = [tuple(r[c] for c in REJECTS_COLUMNS) for r in rejects or []]
    if recorded is None:
        recorded = {}
        for r in rows:
            recorded.setdefault(r["source_topic"], {"read": 0})["read"] += 1
        for r in rejects or []:
            recorded.setdefault(r["source_topic"], {"read": 0})["read"] += 1
    return Partition(
        dt=DT,
        changes=frame(spark, rows),
        rejects=spark.createDataFrame(reject_rows, REJECTS_SCHEMA),
        recorded=recorded,
    )


def reject(line: int, reason: str = "not a valid JSON object", topic: str = "orders") -> dict:
    return {
        "source_format": "oms-canal",
        "source_topic": topic,
        "source_file": "file:/x/part-1.jsonl",
        "source_line": line,
        "raw": "<garbage>",
        "raw_encoding": "text",
        "reason": reason,
        "dt": DT,
    }


def failing_rules(part: Partition) -> dict[str, list[str]]:
    """{rule: example reasons} of the rules that fail on `part` (all four rules, pinned clock)."""
    from cdc_pipelines.quality import Thresholds, run_all

    results, _ = run_all(part, Thresholds(now=NOW))
    return {r.rule: [e["reason"] for e in r.examples] for r in results if not r.passed}
