"""One day's full report from the lake: rules, event counts, volume and lag, optionally the GX suite.

The single call behind both `cdc-pipelines quality` and the `quality_report` asset, so the scheduled
run and a person at a shell get the same files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import SparkSession

from cdc_pipelines.quality.activity import Activity, day_activity
from cdc_pipelines.quality.report import report_day, write_quality_report
from cdc_pipelines.quality.runner import RULES, Thresholds, event_counts, load_partition, run_rule
from cdc_pipelines.snapshots.report import snapshot_report
from cdc_pipelines.snapshots.run import snapshots_root

REPORTS_DIR = "reports"


@dataclass(frozen=True)
class DayReport:
    """Where the day's report went, and its headline figures (for metadata and the CLI's last line)."""

    html: Path
    summary: Path
    rules: dict[str, bool]
    activity: Activity
    data_docs: Path | None

    @property
    def passed(self) -> bool:
        return all(self.rules.values())


def write_day_report(
    spark: SparkSession,
    lake_root: str | Path,
    dt: str,
    out_dir: str | Path | None = None,
    thresholds: Thresholds | None = None,
    great_expectations: bool = True,
) -> DayReport:
    """Write `out_dir/dt=DT/index.html` and `summary.json` (default `out_dir`: `lake_root/reports`).

    Paths are made absolute first: GX's Data Docs site refuses a relative base directory.
    """
    thresholds = thresholds or Thresholds()
    lake_root = Path(lake_root).resolve()
    out = Path(out_dir).resolve() if out_dir else lake_root / REPORTS_DIR
    partition = load_partition(spark, lake_root, dt)
    partition.changes.persist(StorageLevel.MEMORY_AND_DISK)  # every rule and figure passes over it
    try:
        results = [run_rule(name, partition, thresholds) for name in RULES]
        counts = event_counts(partition.changes)
        activity = day_activity(partition.changes, dt)
        gx = None
        if great_expectations:
            from cdc_pipelines.quality.expectations import run_expectations  # slow import: only when asked

            gx = run_expectations(partition.changes, report_day(out, dt), thresholds)
    finally:
        partition.changes.unpersist()
    snapshot = snapshot_report(spark, snapshots_root(lake_root), dt)
    html = write_quality_report(results, out, dt, event_counts=counts, gx=gx, activity=activity, snapshot=snapshot)
    return DayReport(
        html=html,
        summary=html.parent / "summary.json",
        rules={r.rule: r.passed for r in results},
        activity=activity,
        data_docs=gx.docs_index if gx else None,
    )
