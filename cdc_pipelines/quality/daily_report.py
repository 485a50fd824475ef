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
from typing import Any, Protocol

from cdc_pipelines.lake.layout import REPORTS_DIR
from cdc_pipelines.quality.activity import Activity
from cdc_pipelines.quality.day_figures import FIGURES_FILE, DayQuality, figures_key, read_figures
from cdc_pipelines.quality.partition import Thresholds
from cdc_pipelines.quality.report import report_day, write_quality_report
from cdc_pipelines.runtime import storage
from cdc_pipelines.snapshots.report import snapshot_report
from cdc_pipelines.snapshots.run import snapshots_root


class QualityEngine(Protocol):
    """What a report asks of an engine (`engines.local.LocalEngine`, `engines.spark.SparkEngine`): the day's
    quality, the day's first snapshot anomalies, and its session (None without one) for other storage."""

    spark: Any

    def day_quality(
        self, lake_root: str, dt: str, thresholds: Thresholds, key: dict, report_day: Path | None
    ) -> DayQuality: ...

    def snapshot_anomalies(self, root: str, day: str, per_kind: int) -> list[dict]: ...


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


@dataclass(frozen=True)
class _DayFolder:
    """Where one day's report goes (`target`, any filesystem), the local folder written first (`day`, under
    `staging` for a target elsewhere), and the key of the figures that fit the lake now."""

    engine: QualityEngine
    lake_root: str
    dt: str
    thresholds: Thresholds
    great_expectations: bool
    target: str
    staging: str | None
    day: Path
    key: dict

    @classmethod
    def of(cls, engine: QualityEngine, lake_root: str | Path, dt: str, out_dir, thresholds, great_expectations):
        """Local paths made absolute (GX's Data Docs site refuses a relative base directory); a report bound for
        another filesystem staged in a local folder, since GX and the page writer write local files."""
        thresholds = thresholds or Thresholds()
        lake_root = storage.absolute(lake_root)
        target = storage.absolute(out_dir) if out_dir else storage.join(lake_root, REPORTS_DIR)
        staging = None if storage.local_path(target) is not None else tempfile.mkdtemp(prefix="cdc-report-")
        day = report_day(storage.local_path(target) or staging, dt)
        key = figures_key(engine.spark, lake_root, thresholds, great_expectations)
        return cls(engine, lake_root, dt, thresholds, great_expectations, target, staging, day, key)

    @property
    def published(self) -> str:
        """The day's folder at `target`, where readers find the report."""
        return storage.join(self.target, f"dt={self.dt}")

    def scan(self) -> DayQuality:
        """The day's whole quality from one read of it by the engine, its figures kept in the local report folder."""
        gx_day = self.day if self.great_expectations else None
        quality = self.engine.day_quality(self.lake_root, self.dt, self.thresholds, self.key, gx_day)
        (self.day / FIGURES_FILE).write_text(quality.to_json(), encoding="utf-8")
        return quality

    def publish(self, whole: bool) -> None:
        """Copy the staged day to its target through Hadoop: the whole folder replaced, or (`whole` false)
        only the files staged, beside what the folder holds."""
        if self.staging is None:
            return
        if whole:
            storage.copy_from_local(self.engine.spark, str(self.day), self.published)
        else:
            for path in sorted(self.day.iterdir()):
                storage.write_bytes(self.engine.spark, storage.join(self.published, path.name), path.read_bytes())
        shutil.rmtree(self.staging, ignore_errors=True)


def write_day_figures(
    engine: QualityEngine,
    lake_root: str | Path,
    dt: str,
    out_dir: str | Path | None = None,
    thresholds: Thresholds | None = None,
    great_expectations: bool = True,
) -> DayQuality:
    """The day's whole quality from one scan, kept in its report folder (`figures.json`, and the GX Data
    Docs) for `write_day_report` to render: what the daily run's checks step calls."""
    folder = _DayFolder.of(engine, lake_root, dt, out_dir, thresholds, great_expectations)
    quality = folder.scan()
    folder.publish(whole=True)
    return quality


def write_day_report(
    engine: QualityEngine,
    lake_root: str | Path,
    dt: str,
    out_dir: str | Path | None = None,
    thresholds: Thresholds | None = None,
    great_expectations: bool = True,
) -> DayReport:
    """Write `out_dir/dt=DT/index.html` and `summary.json` (default `out_dir`: `lake_root/reports`), staged
    locally where it is bound elsewhere (`_DayFolder.of`). The figures `write_day_figures` kept there are rendered
    when the lake and thresholds are still the ones they were computed for; otherwise the day is scanned here."""
    folder = _DayFolder.of(engine, lake_root, dt, out_dir, thresholds, great_expectations)
    day = folder.published
    quality = read_figures(engine.spark, day, folder.key, folder.day)
    computed = quality is None
    if computed:
        quality = folder.scan()
    snapshot = snapshot_report(engine, snapshots_root(folder.lake_root), dt)
    html = write_quality_report(
        quality.results, folder.day.parent, dt, event_counts=quality.event_counts, gx=quality.gx,
        activity=quality.activity, snapshot=snapshot,
    )  # fmt: skip
    rules = {r.rule: r.passed for r in quality.results}
    if folder.staging is None:
        return DayReport(html, html.parent / "summary.json", rules, quality.activity,
                         quality.gx.docs_index if quality.gx else None)  # fmt: skip
    folder.publish(whole=computed)
    return DayReport(storage.join(day, "index.html"), storage.join(day, "summary.json"), rules, quality.activity,
                     storage.join(day, "gx", "index.html") if quality.gx else None)  # fmt: skip
