"""Per-partition message counts of a decode run: a Delta table beside `changes` and `rejects`.

The canonical table has one row per event, not per message (canal arrays fan out, split updates
merge), so the number of messages read cannot be recovered from it. The run writes its counts here,
after its events and rejects, so a later conservation check can compare them with what the lake holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.io import read_table, replace_rows
from cdc_pipelines.lake.layout import COUNTS_DIR
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.runtime.storage import join

COUNTS_SCHEMA = T.StructType(
    [T.StructField(name, T.LongType(), False) for name in MESSAGE_COUNTS]
    + [T.StructField("dt", T.StringType(), False), T.StructField("source_topic", T.StringType(), False)]
)


def counts_path(lake_root: str | Path) -> str:
    return join(lake_root, COUNTS_DIR)


def write_counts(
    spark: SparkSession | None, lake_root: str | Path, dt: str, per_topic: Mapping[str, Mapping[str, int]]
) -> None:
    """Replace the counts of `dt` for each topic in `per_topic` (one commit; by delta-rs on a local lake,
    where `spark` may be None: no catalog to register the table in)."""
    if not per_topic:
        return
    # counts from before table filters have no `filtered`: none were
    rows = [(*(int(counts.get(k, 0)) for k in MESSAGE_COUNTS), dt, topic) for topic, counts in per_topic.items()]
    replace = [{"dt": dt, "source_topic": topic} for topic in per_topic]
    replace_rows(spark, rows, counts_path(lake_root), replace, COUNTS_SCHEMA, register_as=COUNTS_DIR)


def read_counts(spark: SparkSession | None, lake_root: str | Path, dt: str) -> dict[str, dict[str, int]]:
    """Counts recorded for `dt`, by topic; empty when no run recorded any. No `spark`: a local lake, by delta-rs."""
    if spark is None:
        table = delta_rs.read_partition(counts_path(lake_root), "dt", dt, COUNTS_SCHEMA.names)
        rows = [] if table is None else table.to_pylist()
    else:
        rows = read_table(spark, counts_path(lake_root), COUNTS_SCHEMA).where(F.col("dt") == dt).collect()
    return {row["source_topic"]: {k: int(row[k] or 0) for k in MESSAGE_COUNTS} for row in rows}
