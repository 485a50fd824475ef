"""One day's full report from the lake: rules, event counts, volume and lag, optionally the GX suite.

The single call behind both `cdc-pipelines quality` and the `quality_report` asset, so the scheduled
run and a person at a shell get the same files. `write_day_figures` is the daily run's checks step:
it scans the day once and keeps the figures for the report step (see `day_figures`).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_pipelines import storage
from cdc_pipelines.quality.activity import Activity
from cdc_pipelines.quality.day_figures import (
    FIGURES_FILE,
    DayQuality,
    compute_day_quality,
    figures_key,
    read_figures,
)
from cdc_pipelines.quality.report import report_day, write_quality_report
from cdc_pipelines.quality.runner import Thresholds
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


def _report_folder(lake_root: str, out_dir: str | Path | None) -> tuple[str, str | None, Path]:
    """The reports' folder (any filesystem), the local staging folder for one elsewhere, and the local
    folder to write in (one of the two)."""
    target = storage.absolute(out_dir) if out_dir else storage.join(lake_root, REPORTS_DIR)
    staging = None if storage.local_path(target) is not None else tempfile.mkdtemp(prefix="cdc-report-")
    return target, staging, Path(storage.local_path(target) or staging)


def _publish(spark: SparkSession, staging: str | None, target: str, dt: str, whole: bool) -> None:
    """Copy the staged day to `target` through Hadoop (GX and the page writer write local files): the
    whole folder replaced, or (`whole` false) only the files staged, beside what the folder holds."""
    if staging is None:
        return
    local, day = Path(staging) / f"dt={dt}", storage.join(target, f"dt={dt}")
    if whole:
        storage.copy_from_local(spark, str(local), day)
    else:
        for path in sorted(local.iterdir()):
            storage.write_bytes(spark, storage.join(day, path.name), path.read_bytes())
    shutil.rmtree(staging, ignore_errors=True)


def _keep(quality: DayQuality, day: Path) -> None:
    (day / FIGURES_FILE).write_text(quality.to_json(), encoding="utf-8")


def write_day_figures(
    spark: SparkSession,
    lake_root: str | Path,
    dt: str,
    out_dir: str | Path | None = None,
    thresholds: Thresholds | None = None,
    great_expectations: bool = True,
) -> DayQuality:
    """The day's whole quality from one scan, kept in its report folder (`figures.json`, and the GX Data
    Docs) for `write_day_report` to render: what the daily run's checks step calls."""
    thresholds = thresholds or Thresholds()
    lake_root = storage.absolute(lake_root)
    target, staging, out = _report_folder(lake_root, out_dir)
    day = report_day(out, dt)
    key = figures_key(spark, lake_root, thresholds, great_expectations)
    quality = compute_day_quality(spark, lake_root, dt, thresholds, key, day if great_expectations else None)
    _keep(quality, day)
    _publish(spark, staging, target, dt, whole=True)
    return quality


def write_day_report(
    spark: SparkSession,
    lake_root: str | Path,
    dt: str,
    out_dir: str | Path | None = None,
    thresholds: Thresholds | None = None,
    great_expectations: bool = True,
) -> DayReport:
    """Write `out_dir/dt=DT/index.html` and `summary.json` (default `out_dir`: `lake_root/reports`).

    The figures `write_day_figures` kept there are rendered when the lake and thresholds are still the
    ones they were computed for; otherwise the day is scanned here (and its figures kept). Local paths
    are made absolute first: GX's Data Docs site refuses a relative base directory. A report bound for
    another filesystem (`s3a://...`) is written to a local folder, then copied there through Hadoop.
    """
    thresholds = thresholds or Thresholds()
    lake_root = storage.absolute(lake_root)
    target, staging, out = _report_folder(lake_root, out_dir)
    day = report_day(out, dt)
    key = figures_key(spark, lake_root, thresholds, great_expectations)
    quality = read_figures(spark, storage.join(target, f"dt={dt}"), key, day)
    computed = quality is None
    if computed:
        quality = compute_day_quality(spark, lake_root, dt, thresholds, key, day if great_expectations else None)
        _keep(quality, day)
    snapshot = snapshot_report(spark, snapshots_root(lake_root), dt)
    html = write_quality_report(
        quality.results, out, dt, event_counts=quality.event_counts, gx=quality.gx, activity=quality.activity,
        snapshot=snapshot,
    )  # fmt: skip
    rules = {r.rule: r.passed for r in quality.results}
    if staging is not None:
        _publish(spark, staging, target, dt, whole=computed)
        return DayReport(
            html=storage.join(target, f"dt={dt}", "index.html"),
            summary=storage.join(target, f"dt={dt}", "summary.json"),
            rules=rules,
            activity=quality.activity,
            data_docs=storage.join(target, f"dt={dt}", "gx", "index.html") if quality.gx else None,
        )
    return DayReport(
        html=html,
        summary=html.parent / "summary.json",
        rules=rules,
        activity=quality.activity,
        data_docs=quality.gx.docs_index if quality.gx else None,
    )
