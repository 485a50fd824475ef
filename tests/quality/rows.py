"""Hand-built canonical events (one clean oms-canal INSERT by default, overridden field by field), written as
a day of a lake and judged by an engine."""

from __future__ import annotations

import datetime as dt
import itertools
import os
from pathlib import Path

import pyarrow as pa

from cdc_pipelines.decode.runner import rows_to_batch
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import COUNTS_SCHEMA
from cdc_pipelines.model.canonical import PARTITION_COLUMNS
from cdc_pipelines.model.schema import CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.quality import Thresholds

DT = "2024-01-01"
NOW = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
THRESHOLDS = Thresholds(now=NOW)
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
    from cdc_pipelines.model.schema import CANONICAL_COLUMNS

    return spark.createDataFrame([tuple(r[c] for c in CANONICAL_COLUMNS) for r in rows], CANONICAL_SCHEMA)


def _micros(value):
    return None if value is None else (value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)


def write_table(lake: str | Path, rows: list[dict], schema, name: str, parts: list[dict]) -> None:
    """`rows` (times as aware datetimes) as the partitions `parts` of the lake's table `name`, by delta-rs."""
    target = delta_rs.arrow_schema(schema)
    data = rows_to_batch([{**r, **{k: _micros(r[k]) for k in ("event_time", "sync_time") if k in r}} for r in rows],
                         target)  # fmt: skip
    delta_rs.replace_partitions(pa.Table.from_batches([data], schema=target), os.path.join(lake, name), parts, schema,
                                PARTITION_COLUMNS)  # fmt: skip


def write_day(lake: str | Path, rows: list[dict], recorded: dict | None = None, rejects: list[dict] | None = None):
    """A lake of one day: `rows`, `rejects` and the counts its run `recorded` (by default exactly one message
    per event and reject; `{}`: none recorded)."""
    if recorded is None:
        recorded = {}
        for r in [*rows, *(rejects or [])]:
            recorded.setdefault(r["source_topic"], {"read": 0})["read"] += 1
    topics = sorted({r["source_topic"] for r in [*rows, *(rejects or [])]} | set(recorded))
    parts = [{"dt": DT, "source_topic": t} for t in topics]
    write_table(lake, rows, CANONICAL_SCHEMA, CHANGES_DIR, parts)
    write_table(lake, rejects or [], REJECTS_SCHEMA, REJECTS_DIR, parts)
    counts = [{"read": c.get("read", 0), "decoded": 0, "rejected": 0, "filtered": c.get("filtered", 0), "events": 0,
               "dt": DT, "source_topic": t} for t, c in recorded.items()]  # fmt: skip
    write_table(lake, counts, COUNTS_SCHEMA, COUNTS_DIR, parts)
    return lake


def judge_day(engine, lake, rows, recorded=None, rejects=None, thresholds: Thresholds = THRESHOLDS, gx=None):
    """The day of `rows` (see `write_day`) judged by `engine` (with the GX suite given its folder `gx`)."""
    write_day(lake, rows, recorded, rejects)
    return engine.day_quality(str(lake), DT, thresholds, {}, gx)


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


def failing_rules(results: dict) -> dict[str, list[str]]:
    """{rule: example reasons} of the rules that fail among `judge`'s results."""
    return {name: [e["reason"] for e in r.examples] for name, r in results.items() if not r.passed}


def rules_of(engine, lake, dt: str = DT, thresholds: Thresholds = THRESHOLDS) -> dict:
    """{rule: RuleResult} of the lake's day `dt`, judged by `engine`."""
    return {r.rule: r for r in engine.day_quality(str(lake), dt, thresholds, {}, None).results}
