"""One day's full report from the lake: rules, event counts, volume and lag, optionally the GX suite.

The single call behind both `cdc-pipelines quality` and the `quality_report` asset, so the scheduled
run and a person at a shell get the same files.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_pipelines import storage
from cdc_pipelines.quality.activity import Activity
from cdc_pipelines.quality.report import report_day, write_quality_report
from cdc_pipelines.quality.runner import RULES, Thresholds, load_partition
from cdc_pipelines.quality.scan import DayScan
from cdc_pipelines.snapshots.report import snapshot_report
from cdc_pipelines.snapshots.run import snapshots_root

REPORTS_DIR = "reports"


@dataclass(frozen=True)
class DayReport:
    """Where the day's report went, and its headline figures (for metadata and the CLI's last line)."""

    html: Path | str  # a URI where the report went to another filesystem
    summary: Path | str
    rules: dict[str, bool]
    activity: Activity
    data_docs: Path | str | None

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

    Local paths are made absolute first: GX's Data Docs site refuses a relative base directory. A
    report bound for another filesystem (`s3a://...`) is written to a local folder, then copied there
    through Hadoop, since GX and the page writer write local files.
    """
    thresholds = thresholds or Thresholds()
    lake_root = storage.absolute(lake_root)
    target = storage.absolute(out_dir) if out_dir else storage.join(lake_root, REPORTS_DIR)
    staging = None if storage.local_path(target) is not None else tempfile.mkdtemp(prefix="cdc-report-")
    out = Path(storage.local_path(target) or staging)
    partition = load_partition(spark, lake_root, dt)
    with DayScan(partition, thresholds, RULES, figures=True) as scan:  # one pass: every rule, figure and GX flag
        results = scan.results()
        counts = scan.event_counts()
        activity = scan.activity()
        gx = None
        if great_expectations:
            from cdc_pipelines.quality.expectations import run_expectations  # slow import: only when asked

            gx = run_expectations(partition.changes, report_day(out, dt), thresholds, scan=scan)
    snapshot = snapshot_report(spark, snapshots_root(lake_root), dt)
    html = write_quality_report(results, out, dt, event_counts=counts, gx=gx, activity=activity, snapshot=snapshot)
    if staging is not None:
        storage.copy_from_local(spark, str(out / f"dt={dt}"), storage.join(target, f"dt={dt}"))
        shutil.rmtree(staging, ignore_errors=True)
        html = storage.join(target, f"dt={dt}", "index.html")
        return DayReport(
            html=html,
            summary=storage.join(target, f"dt={dt}", "summary.json"),
            rules={r.rule: r.passed for r in results},
            activity=activity,
            data_docs=storage.join(target, f"dt={dt}", "gx", "index.html") if gx else None,
        )
    return DayReport(
        html=html,
        summary=html.parent / "summary.json",
        rules={r.rule: r.passed for r in results},
        activity=activity,
        data_docs=gx.docs_index if gx else None,
    )
