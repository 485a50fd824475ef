"""The Spark engine: the same rule functions the local engine runs, in Spark's tasks (`mapInArrow`), over a
lake on any storage Hadoop reaches, on a local master or a cluster.

Each task judges its batches and returns what it counted as one pickled value (the rules' tallies merge);
only those small values reach the driver. The day-wide questions the rules ask (the ids that repeat, the
lines behind each topic's events) are Spark's own group-bys.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.engines.local import read_record
from cdc_pipelines.lake import io
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR
from cdc_pipelines.quality import day as quality_day
from cdc_pipelines.quality import rejects as quality_rejects
from cdc_pipelines.quality.day_figures import DayQuality, MissingPartitionError, day_quality_of
from cdc_pipelines.quality.partition import Thresholds
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots.report import EXAMPLE_COLUMNS, first_anomalies
from cdc_pipelines.snapshots.schema import ANOMALY_SCHEMA
from cdc_pipelines.snapshots.store import ANOMALIES, read_day

_PICKLED = "value binary"


def per_task(frame: DataFrame, count: Callable[[Iterator[pa.RecordBatch]], Any]) -> list:
    """What `count` gives of each task's batches of `frame` (one pickled value a task, unpickled here)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield pa.RecordBatch.from_pydict({"value": [pickle.dumps(count(batches))]})

    return [pickle.loads(r.value) for r in frame.mapInArrow(run, _PICKLED).collect()]


class SparkEngine:
    """The Spark engine's steps over the session `spark` (see the module)."""

    name = "spark"

    def __init__(self, spark: SparkSession):
        self.spark = spark

    def day_quality(
        self, lake_root: str, dt: str, thresholds: Thresholds, key: dict, report_day: Path | None
    ) -> DayQuality:
        """The day's whole quality (`day_figures.day_quality_of`), the GX suite over a Spark frame of the flags."""
        spark = self.spark
        partition = read_record(lake_root, dt, spark)
        day = F.col("dt") == dt
        events = io.read_canonical(spark, join(lake_root, CHANGES_DIR)).where(day).select(*quality_day.EVENT_COLUMNS)
        rejects = io.read_rejects(spark, join(lake_root, REJECTS_DIR)).where(day).select(*quality_day.REJECT_COLUMNS)
        if not partition.recorded and events.isEmpty() and rejects.isEmpty():
            raise MissingPartitionError(f"no changes or rejects for dt={dt} under {lake_root}")
        n, ids = "n", quality_day.ID_COLUMN
        repeated = events.groupBy(ids).agg(F.count(F.lit(1)).alias(n)).where(F.col(n) > 1).collect()
        with_pk = per_task(events, lambda batches: set().union(*map(quality_day.tables_with_pk, batches)))
        context = quality_day.DayContext(frozenset(set().union(*with_pk)), {r[ids]: r[n] for r in repeated})
        topic, file, line = quality_day.LINE_COLUMNS
        lines = events.groupBy(topic).agg(F.count_distinct(file, line).alias(n)).collect()
        rules = quality_day.event_rules(thresholds)

        def tally(batches: Iterator[pa.RecordBatch]) -> quality_day.DayTally:
            return quality_day.merged(quality_day.judged_batch(b, rules, context, dt)[0] for b in batches)

        merged = quality_day.merged(per_task(events, tally))
        summary = quality_rejects.merge(
            per_task(rejects, lambda batches: quality_rejects.merge(map(quality_day.reject_summary, batches)))
        )
        gx = None
        if report_day is not None:
            from cdc_pipelines.quality.expectations import validate_flags  # slow import: only when asked

            schema = ", ".join(f"`{f.name}` {'string' if f.type == pa.string() else 'boolean'}"
                               for f in quality_day.flag_schema(rules))  # fmt: skip
            flags = events.mapInArrow(lambda batches: (quality_day.judged_batch(b, rules, context, dt, True)[1]
                                                        for b in batches), schema)  # fmt: skip
            gx = validate_flags(lambda sources: sources.add_spark(name="lake"), flags,
                                quality_day.flag_names(rules), report_day, thresholds)  # fmt: skip
        return day_quality_of(partition, merged, {r[topic]: r[n] for r in lines}, summary, thresholds, key, gx)

    def snapshot_anomalies(self, root: str, day: str, per_kind: int) -> list[dict]:
        """The day's first anomalies of each kind (`snapshots.report.first_anomalies`), each task's first
        of its own rows merged here."""
        anomalies = read_day(self.spark, join(root, ANOMALIES), ANOMALY_SCHEMA, day).select(*EXAMPLE_COLUMNS)
        found = per_task(anomalies, lambda batches: first_anomalies((r for b in batches for r in b.to_pylist()),
                                                                    per_kind))  # fmt: skip
        return first_anomalies((r for rows in found for r in rows), per_kind)
