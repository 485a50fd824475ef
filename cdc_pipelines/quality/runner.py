"""Load one partition of the lake and run the rules on it (through one `DayScan`): the entry point of
the CLI and the assets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.extract.files import InputError
from cdc_pipelines.lake import io
from cdc_pipelines.lake.kafka_offsets import day_gaps
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import read_counts
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.result import RuleResult
from cdc_pipelines.quality.scan import DayScan
from cdc_pipelines.runtime.storage import join

RULES = ("image_presence_check", "timestamp_precision_check", "pk_consistency_check", "conservation_check")


class MissingPartitionError(InputError):
    """The partition was never decoded: no changes, no rejects, no recorded counts."""


def load_partition(spark: SparkSession, lake_root: str | Path, dt_value: str) -> Partition:
    """`lake_root/changes` and `lake_root/rejects` for `dt_value`, plus the counts its run recorded.

    A day with neither rows nor recorded counts was never decoded: that raises. A quiet day (counts
    recorded, no events) gives empty frames, so every rule passes with nothing checked.
    """
    recorded = read_counts(spark, lake_root, dt_value)
    changes = io.read_canonical(spark, join(lake_root, CHANGES_DIR)).where(F.col("dt") == dt_value)
    rejects = io.read_rejects(spark, join(lake_root, REJECTS_DIR)).where(F.col("dt") == dt_value)
    if not recorded and changes.isEmpty() and rejects.isEmpty():
        raise MissingPartitionError(f"no changes or rejects for dt={dt_value} under {lake_root}")
    gaps = day_gaps(spark, lake_root, dt_value)
    return Partition(dt=dt_value, changes=changes, rejects=rejects, recorded=recorded, kafka_gaps=gaps)


def check_conservation(partition: Partition, *, max_reject_rate: float = 0.05) -> RuleResult:
    """The conservation rule alone on a loaded partition."""
    return run_rule("conservation_check", partition, Thresholds(max_reject_rate=max_reject_rate))


def run_rule(name: str, partition: Partition, thresholds: Thresholds = Thresholds()) -> RuleResult:
    """Run the rule called `name` (one of RULES) on a loaded partition: a scan of only its columns."""
    if name not in RULES:
        raise KeyError(f"unknown quality rule {name!r}; known: {', '.join(RULES)}")
    with DayScan(partition, thresholds, [name]) as scan:
        return scan.results()[0]


def check_partition(
    spark: SparkSession, lake_root: str | Path, dt_value: str, name: str, thresholds: Thresholds = Thresholds()
) -> RuleResult:
    """Load `dt_value` from the lake and run one rule."""
    return run_rule(name, load_partition(spark, lake_root, dt_value), thresholds)


def check_partition_rules(
    spark: SparkSession,
    lake_root: str | Path,
    dt_value: str,
    names: Sequence[str],
    thresholds: Thresholds = Thresholds(),
) -> dict[str, RuleResult]:
    """Load `dt_value` from the lake and run the rules `names` from one scan: what the Dagster checks call."""
    unknown = [n for n in names if n not in RULES]
    if unknown:
        raise KeyError(f"unknown quality rule {unknown[0]!r}; known: {', '.join(RULES)}")
    with DayScan(load_partition(spark, lake_root, dt_value), thresholds, names) as scan:
        return dict(zip(names, scan.results(), strict=True))


def run_all(partition: Partition, thresholds: Thresholds = Thresholds()) -> tuple[list[RuleResult], list[dict]]:
    """Every rule plus the event counts, from one scan of the partition."""
    with DayScan(partition, thresholds, RULES, figures=True) as scan:
        return scan.results(), scan.event_counts()
