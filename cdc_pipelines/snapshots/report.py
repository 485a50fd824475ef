"""What the quality report shows of a day's snapshot: its summary plus a few anomalies of each kind."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots.schema import ANOMALY_SCHEMA, TABLE
from cdc_pipelines.snapshots.store import ANOMALIES, read_day, read_summary


def snapshot_report(spark: SparkSession, root: str | Path, day: str, per_kind: int = 5) -> dict | None:
    """The day's summary with `examples` (up to `per_kind` anomalies of each kind); None if never applied."""
    summary = read_summary(root, day)
    if summary is None:
        return None
    anomalies = read_day(spark, join(root, ANOMALIES), ANOMALY_SCHEMA, day)
    first = Window.partitionBy("kind").orderBy(*TABLE, "event_id")
    rows = anomalies.withColumn("_n", F.row_number().over(first)).where(F.col("_n") <= per_kind).collect()
    examples = [{c: r[c] for c in (*TABLE, "kind", "event_id", "op", "detail")} for r in rows]
    return {**summary, "examples": sorted(examples, key=lambda e: (e["kind"], e["event_id"]))}
