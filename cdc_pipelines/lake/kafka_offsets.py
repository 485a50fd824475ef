"""The offsets each day read from Kafka: a Delta table beside `changes`, `rejects` and `counts`.

One row per (day, topic, partition): the Kafka topic, the day's bounds in offsets and epoch ms, the
first and last offset kept and their number (see `model.kafka_offsets`). A rerun of a day reads the
offsets recorded here, not Kafka's time index again, so it gets the same messages however many arrived
since; the quality report compares each day's end with the next day's start.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.io import is_table, read_table, replace_rows
from cdc_pipelines.lake.layout import KAFKA_OFFSETS_DIR
from cdc_pipelines.model.kafka_offsets import OffsetGap, PartitionOffsets, find_gaps
from cdc_pipelines.runtime.storage import join

OFFSETS_DIR = KAFKA_OFFSETS_DIR
_OFFSET_FIELDS = ("start_offset", "end_offset", "scan_end", "first", "last", "messages", "start_ms", "end_ms")
OFFSETS_SCHEMA = T.StructType(
    [
        T.StructField("kafka_topic", T.StringType(), False),
        T.StructField("partition", T.IntegerType(), False),
        *[T.StructField(name, T.LongType(), name in ("first", "last")) for name in _OFFSET_FIELDS],
        T.StructField("dt", T.StringType(), False),
        T.StructField("source_topic", T.StringType(), False),
    ]
)


def offsets_path(lake_root: str | Path) -> str:
    return join(lake_root, OFFSETS_DIR)


def _partition_offsets(row) -> PartitionOffsets:
    return PartitionOffsets(row["partition"], *(row[name] for name in _OFFSET_FIELDS))


def write_offsets(
    spark: SparkSession | None, lake_root: str | Path, day: str, source_topic: str, kafka_topic: str,
    partitions: Iterable[PartitionOffsets],
) -> None:  # fmt: skip
    """Replace the recorded offsets of (`day`, `source_topic`) with `partitions` (one commit, by delta-rs in a
    local lake: `io.replace_rows`; no `spark` for a local lake)."""
    rows = [(kafka_topic, p.partition, *(getattr(p, n) for n in _OFFSET_FIELDS), day, source_topic) for p in partitions]
    replace = [{"dt": day, "source_topic": source_topic}]
    replace_rows(spark, rows, offsets_path(lake_root), replace, OFFSETS_SCHEMA, register_as=OFFSETS_DIR)


def read_offsets(
    spark: SparkSession | None, lake_root: str | Path, day: str, source_topic: str
) -> tuple[str | None, dict[int, PartitionOffsets]]:
    """(Kafka topic, offsets by partition) recorded for (`day`, `source_topic`); (None, {}) when the day
    was never read. No `spark`: a local lake, read with delta-rs (no JVM)."""
    if spark is None:
        rows = delta_rs.small_partition_rows(offsets_path(lake_root), {"dt": day, "source_topic": source_topic})
    else:
        table = read_table(spark, offsets_path(lake_root), OFFSETS_SCHEMA)
        rows = table.where((F.col("dt") == day) & (F.col("source_topic") == source_topic)).collect()
    if not rows:
        return None, {}
    return rows[0]["kafka_topic"], {r["partition"]: _partition_offsets(r) for r in rows}


def read_days_offsets(
    spark: SparkSession | None, lake_root: str | Path, dts: Iterable[str]
) -> dict[tuple[str, str], list[PartitionOffsets]]:
    """The recorded offsets of the days `dts`, by (source topic, day); no Spark job where no day of any
    topic was ever read from Kafka (the quality run of a lake of files counts its jobs). No `spark`: a local
    lake, by delta-rs."""
    if spark is None:
        tables = (delta_rs.read_partition(offsets_path(lake_root), "dt", d, OFFSETS_SCHEMA.names) for d in dts)
        rows = [r for t in tables if t is not None for r in t.to_pylist()]
    elif not is_table(spark, offsets_path(lake_root)):
        return {}
    else:
        rows = read_table(spark, offsets_path(lake_root), OFFSETS_SCHEMA).where(F.col("dt").isin(list(dts))).collect()
    out: dict[tuple[str, str], list[PartitionOffsets]] = {}
    for row in rows:
        out.setdefault((row["source_topic"], row["dt"]), []).append(_partition_offsets(row))
    return out


def day_gaps(spark: SparkSession | None, lake_root: str | Path, day: str) -> list[OffsetGap]:
    """Gaps and overlaps between `day`'s recorded offsets and those of the day before and after it."""
    date = dt.date.fromisoformat(day)
    days = [(date + dt.timedelta(days=d)).isoformat() for d in (-1, 0, 1)]
    return find_gaps(read_days_offsets(spark, lake_root, days))
