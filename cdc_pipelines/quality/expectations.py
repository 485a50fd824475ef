"""The event rules as a Great Expectations 1.x suite on the partition's Spark DataFrame, with Data Docs.

GX's built-in expectations cannot look inside the image maps, so every sub-check becomes one boolean
column per event, projected from the flags of the day's scan that our rules count (null where the
sub-check does not apply, true where it fails), and GX expects each column to hold only `false`. One
column per rule (any applicable sub-check failing) carries the rule's threshold as `mostly`. Conservation compares
counts recorded by the decode run with the lake, not a property of the rows, and the decoder's
rejected orphan halves are not events: both stay with our own rules and report.

GX keeps its state in an ephemeral context; only the static Data Docs site is written, under the
report folder. GX itself is imported inside `run_expectations` only: it is slow to import.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.quality.gx_static import localize
from cdc_pipelines.quality.images import RULE as IMAGE_RULE
from cdc_pipelines.quality.keys import RULE as PK_RULE
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.result import FLAG_SEPARATOR, flag_column
from cdc_pipelines.quality.scan import DayScan
from cdc_pipelines.quality.timestamps import RULE as TIMESTAMP_RULE

GX_DIR = "gx"
SUITE = "cdc_event_rules"
SITE = "cdc_quality_docs"
DEFAULT_THRESHOLDS = Thresholds()
EVENT_RULES = (IMAGE_RULE, TIMESTAMP_RULE, PK_RULE)
# counts only: a list of unexpected values costs one Spark job per expectation and would only say `true`
RESULT_FORMAT = {"result_format": "BASIC", "partial_unexpected_count": 0}


@dataclass(frozen=True)
class ExpectationOutcome:
    """One expectation's figures: `checked` events it applied to, `failed` of them, and GX's verdict."""

    column: str
    rule: str
    check: str | None
    checked: int
    failed: int
    success: bool


@dataclass(frozen=True)
class GxReport:
    """The suite's verdict, each expectation's outcome and the Data Docs index to link."""

    success: bool
    outcomes: list[ExpectationOutcome]
    docs_index: Path
    offline: bool = False  # the site's CSS and scripts are local copies (see gx_static)


def _scan(changes: DataFrame, thresholds: Thresholds) -> DayScan:
    return DayScan(Partition(dt="", changes=changes, rejects=changes.limit(0)), thresholds, EVENT_RULES)


def flag_frame(scan: DayScan) -> DataFrame:
    """`event_id` plus, per event rule, a `rule` column and a `rule__check` column per sub-check: null
    where it does not apply, true where the event fails it. Projected from the scan's persisted
    applies/fails columns: nothing is recomputed."""
    columns = []
    for rule in scan.rules:
        any_applies, any_fails = F.lit(False), F.lit(False)
        for name in rule.checks:
            applies, fails = F.col(rule.column("a", name)), F.col(rule.column("f", name))
            columns.append(F.when(applies, fails).alias(flag_column(rule.name, name)))
            any_applies, any_fails = any_applies | applies, any_fails | fails
        columns.append(F.when(any_applies, any_fails).alias(rule.name))
    return scan.events.select("event_id", *columns)


def _suite(gx, columns: list[str], max_failure_ratio: float):
    suite = gx.ExpectationSuite(name=SUITE)
    for column in columns:
        rule, _, check = column.partition(FLAG_SEPARATOR)
        suite.add_expectation(
            gx.expectations.ExpectColumnValuesToBeInSet(
                column=column,
                value_set=[False],
                mostly=1.0 - max_failure_ratio if not check else 1.0,
                meta={"rule": rule, "check": check or "(any sub-check)"},
            )
        )
    return suite


def _docs_site(base_directory: Path) -> dict:
    return {
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(base_directory)},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    }


def run_expectations(
    changes: DataFrame,
    report_day: str | Path,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    scan: DayScan | None = None,
) -> GxReport:
    """Validate the partition's events against the suite and (re)build its Data Docs in
    `report_day/gx/` (the day's report folder, `reports/dt=YYYY-MM-DD`).

    Given the day's `scan` (built with the same thresholds), GX reads the flags the rules counted from
    its persisted frame; without one, `changes` gets a scan of its own."""
    own = scan is None
    scan = _scan(changes, thresholds) if own else scan
    flags = flag_frame(scan)
    try:
        return _validate(lambda sources: sources.add_spark(name="lake"), flags, flags.columns, report_day, thresholds)
    finally:
        if own:
            scan.events.unpersist()


def run_expectations_on_rows(
    flags: list[dict], columns: list[str], report_day: str | Path, thresholds: Thresholds
) -> GxReport:
    """`run_expectations` on the flag rows and `columns` of `flag_frame`, held in Python (a day judged in
    process, `in_process.flag_rows`): GX validates them as a pandas frame, the same suite, the same figures."""
    import pandas as pd

    frame = pd.DataFrame.from_records(flags, columns=columns)
    return _validate(lambda sources: sources.add_pandas(name="lake"), frame, columns, report_day, thresholds)


def _validate(source, flags, columns: list[str], report_day: str | Path, thresholds: Thresholds) -> GxReport:
    """The suite over `flags` (a frame of the data source `source` adds), its Data Docs in `report_day/gx`."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    docs = Path(report_day).resolve() / GX_DIR  # GX refuses a relative base_directory
    shutil.rmtree(docs, ignore_errors=True)
    columns = [c for c in columns if c != "event_id"]
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    context.add_data_docs_site(site_name=SITE, site_config=_docs_site(docs))
    batch = (
        source(context.data_sources).add_dataframe_asset(name="canonical_changes")
        .add_batch_definition_whole_dataframe("partition")
    )  # fmt: skip
    suite = context.suites.add(_suite(gx, columns, thresholds.max_failure_ratio))
    validation = context.validation_definitions.add(
        gx.ValidationDefinition(name="partition_event_rules", data=batch, suite=suite)
    )
    checkpoint = context.checkpoints.add(
        gx.Checkpoint(
            name="quality",
            validation_definitions=[validation],
            actions=[gx.checkpoint.UpdateDataDocsAction(name="data_docs", site_names=[SITE])],
            result_format=RESULT_FORMAT,
        )
    )
    run = checkpoint.run(batch_parameters={"dataframe": flags})
    (result,) = run.run_results.values()
    outcomes = []
    for r in result.results:
        column = r.expectation_config.kwargs["column"]
        rule, _, check = column.partition(FLAG_SEPARATOR)
        figures = r.result
        outcomes.append(
            ExpectationOutcome(
                column=column,
                rule=rule,
                check=check or None,
                checked=figures["element_count"] - figures["missing_count"],
                failed=figures["unexpected_count"] or 0,  # GX on Spark says None for a day without events
                success=r.success,
            )
        )
    offline = localize(docs)
    return GxReport(success=run.success, outcomes=outcomes, docs_index=docs / "index.html", offline=offline)
