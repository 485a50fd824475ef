"""The event rules as a Great Expectations 1.x suite over the day's flags, with Data Docs.

GX's expectations cannot look inside the image maps, so every sub-check is one boolean column per event
(`day.judged_batch`: null where it does not apply, true where it fails) that GX expects to hold only `false`,
over the frame the engine holds the flags in (pandas or Spark); one column per rule carries the rule's
threshold as `mostly`. Conservation and the rejected orphan halves are not properties of the events: they
stay with our own rules. GX's context is ephemeral (only the Data Docs site is written, under the report
folder), and GX is imported inside `validate_flags` only: it is slow to import.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from cdc_pipelines.quality.gx_static import localize
from cdc_pipelines.quality.partition import Thresholds
from cdc_pipelines.quality.result import FLAG_SEPARATOR

GX_DIR = "gx"
SUITE = "cdc_event_rules"
SITE = "cdc_quality_docs"
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


def validate_flags(source, flags, columns: list[str], report_day: str | Path, thresholds: Thresholds) -> GxReport:
    """The suite over `flags` (a frame of the data source `source` adds: pandas or Spark) and its flag
    `columns` (`day.flag_names`), its Data Docs (re)built in `report_day/gx/` (the day's report folder)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    docs = Path(report_day).resolve() / GX_DIR  # GX refuses a relative base_directory
    shutil.rmtree(docs, ignore_errors=True)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    store = {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs)}
    site = {
        "class_name": "SiteBuilder",
        "store_backend": store,
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    }
    context.add_data_docs_site(site_name=SITE, site_config=site)
    batch = (
        source(context.data_sources).add_dataframe_asset(name="canonical_changes")
        .add_batch_definition_whole_dataframe("partition")
    )  # fmt: skip
    suite = gx.ExpectationSuite(name=SUITE)
    for column in columns:  # each rule's own column holds its threshold; a sub-check's fails on any event
        rule, _, check = column.partition(FLAG_SEPARATOR)
        mostly = 1.0 - thresholds.max_failure_ratio if not check else 1.0
        meta = {"rule": rule, "check": check or "(any sub-check)"}
        expectation = gx.expectations.ExpectColumnValuesToBeInSet(
            column=column, value_set=[False], mostly=mostly, meta=meta
        )
        suite.add_expectation(expectation)
    suite = context.suites.add(suite)
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
        column, figures = r.expectation_config.kwargs["column"], r.result
        rule, _, check = column.partition(FLAG_SEPARATOR)
        checked = figures["element_count"] - figures["missing_count"]
        failed = figures["unexpected_count"] or 0  # GX on Spark says None for a day without events
        outcomes.append(ExpectationOutcome(column, rule, check or None, checked, failed, r.success))
    offline = localize(docs)
    return GxReport(success=run.success, outcomes=outcomes, docs_index=docs / "index.html", offline=offline)
