"""A day's whole quality from one scan, and its figures kept beside the day's report so that a later step
renders them instead of scanning again.

The scan writes them to `reports/dt=D/figures.json` with the versions of the three Delta tables they came
from and the thresholds they used; a report whose lake still has those versions renders them, any other
computes its own. A small JSON file, not a table: a cache of one day's aggregates, replaced and read whole.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdc_pipelines.extract.files import InputError
from cdc_pipelines.lake import io
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.quality.activity import Activity
from cdc_pipelines.quality.day import DayTally, day_figures
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.rejects import RejectSummary
from cdc_pipelines.quality.result import RuleResult
from cdc_pipelines.runtime import storage

FIGURES_FILE = "figures.json"
SOURCE_TABLES = (CHANGES_DIR, REJECTS_DIR, COUNTS_DIR)


class MissingPartitionError(InputError):
    """The partition was never decoded: no changes, no rejects, no recorded counts."""


@dataclass(frozen=True)
class DayQuality:
    """Every rule's result, the event counts, the activity figures and the GX outcome (None without GX)
    of one day, with the `key` (source table versions, thresholds, GX or not) they were computed for."""

    dt: str
    key: dict[str, Any]
    results: list[RuleResult]
    event_counts: list[dict]
    activity: Activity
    gx: Any  # expectations.GxReport: that module imports GX's wrappers only where they run

    def to_json(self) -> str:
        data = asdict(self)
        gx = data.pop("gx")  # without its `docs_index`: the day's folder's, found again on reading
        data["great_expectations"] = gx and {k: v for k, v in gx.items() if k != "docs_index"}
        return json.dumps(data, default=str)

    @classmethod
    def from_json(cls, text: str, report_day: Path) -> DayQuality:
        """The figures `to_json` gave; the GX Data Docs are those of `report_day` (the day's report folder)."""
        data = json.loads(text)
        gx = data.pop("great_expectations")
        if gx is not None:
            from cdc_pipelines.quality.expectations import GX_DIR, ExpectationOutcome, GxReport

            outcomes = [ExpectationOutcome(**o) for o in gx["outcomes"]]
            gx = GxReport(gx["success"], outcomes, report_day / GX_DIR / "index.html", gx["offline"])
        results = [RuleResult.from_dict(r) for r in data["results"]]
        return cls(**data | {"results": results, "activity": Activity.from_dict(data["activity"]), "gx": gx})


def figures_key(spark, lake_root: str, thresholds: Thresholds, great_expectations: bool) -> dict:
    """What a day's figures depend on: the latest version of each source table (listed through `spark`'s
    Hadoop, or locally without it), the thresholds, GX or not."""
    return {
        "sources": {name: io.table_version(spark, storage.join(lake_root, name)) for name in SOURCE_TABLES},
        "thresholds": {
            "max_failure_ratio": thresholds.max_failure_ratio,
            "max_reject_rate": thresholds.max_reject_rate,
            "future_tolerance_s": thresholds.future_tolerance.total_seconds(),
            "sync_tolerance_s": thresholds.sync_tolerance.total_seconds(),
            "now": thresholds.now.isoformat() if thresholds.now else None,
        },
        "great_expectations": great_expectations,
    }


def day_quality_of(
    partition: Partition,
    tally: DayTally,
    lines: dict[str, int],
    rejects: RejectSummary,
    thresholds: Thresholds,
    key: dict,
    gx: Any,
) -> DayQuality:
    """The day's whole quality from what an engine counted (`day.day_figures`), and the GX outcome. `key`
    is taken before the day is read, so a commit meanwhile leaves the figures stale rather than wrongly current."""
    results, counts, activity = day_figures(partition, tally, lines, rejects, thresholds)
    return DayQuality(dt=partition.dt, key=key, results=results, event_counts=counts, activity=activity, gx=gx)


def read_figures(spark, target_day: str, key: dict, report_day: Path) -> DayQuality | None:
    """The figures kept in `target_day` (the day's report folder, any filesystem; local without `spark`)
    if they were computed for `key`; None where there are none or they are stale."""
    path = storage.join(target_day, FIGURES_FILE)
    local = storage.local_path(path)
    if local is not None:
        if not os.path.isfile(local):
            return None
        text = Path(local).read_text(encoding="utf-8")
    elif not storage.exists(spark, path):
        return None
    else:
        text = storage.read_bytes(spark, path).decode("utf-8")
    kept = DayQuality.from_json(text, report_day)
    return kept if kept.key == key else None
