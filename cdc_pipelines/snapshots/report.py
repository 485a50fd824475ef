"""What the quality report shows of a day's snapshot: its summary plus a few anomalies of each kind."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots.schema import ANOMALY_SCHEMA, TABLE
from cdc_pipelines.snapshots.store import ANOMALIES, read_day, read_summary

EXAMPLE_COLUMNS = (*TABLE, "kind", "event_id", "op", "detail")


def snapshot_report(spark: SparkSession, root: str | Path, day: str, per_kind: int = 5) -> dict | None:
    """The day's summary with `examples` (up to `per_kind` anomalies of each kind); None if never applied."""
    summary = read_summary(root, day)
    if summary is None:
        return None
    anomalies = read_day(spark, join(root, ANOMALIES), ANOMALY_SCHEMA, day)
    first = Window.partitionBy("kind").orderBy(*TABLE, "event_id")
    rows = anomalies.withColumn("_n", F.row_number().over(first)).where(F.col("_n") <= per_kind).collect()
    return _with_examples(summary, rows)


def snapshot_report_local(root: str | Path, day: str, per_kind: int = 5) -> dict | None:
    """`snapshot_report` of a local lake, read with delta-rs (a quality run judged without a JVM)."""
    summary = read_summary(root, day)
    if summary is None:
        return None
    table = delta_rs.read_partition(join(root, ANOMALIES), "dt", day, EXAMPLE_COLUMNS)
    kinds: dict[str, list[dict]] = {}
    for row in [] if table is None else table.to_pylist():
        kinds.setdefault(row["kind"], []).append(row)
    first = [r for rows in kinds.values() for r in sorted(rows, key=_window_order)[:per_kind]]
    return _with_examples(summary, first)


def _window_order(row: dict) -> tuple:
    """The window's order (table, event id), ascending with nulls first as Spark sorts."""
    return tuple((row[c] is not None, row[c]) for c in (*TABLE, "event_id"))


def _with_examples(summary: dict, rows: list) -> dict:
    examples = [{c: r[c] for c in EXAMPLE_COLUMNS} for r in rows]
    order = ("kind", "event_id", *TABLE)  # nulls first, as the window sorts
    return {**summary, "examples": sorted(examples, key=lambda e: tuple((e[c] is not None, e[c]) for c in order))}
