"""The daily quality report asset: each day of the run gets its HTML page and summary.json in the lake."""

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.keys import CANONICAL, REPORT
from assets.partitions import DAILY, SINGLE_RUN
from assets.quality import quality_engine
from cdc_pipelines.quality.daily_report import DayReport, write_day_report
from resources import LakeStorageResource, QualityConfigResource


def report_metadata(report: DayReport) -> dict:
    """Links to the day's files and the figures an operator looks at first."""
    activity = report.activity
    metadata = {
        "report": dg.MetadataValue.path(str(report.html)),
        "report_url": dg.MetadataValue.url(report.html.as_uri()),
        "summary": dg.MetadataValue.path(str(report.summary)),
        "passed": report.passed,
        "rules": dg.MetadataValue.json(report.rules),
        "flagged_topics": dg.MetadataValue.json(activity.flags),
        "lag_seconds": dg.MetadataValue.json(
            {t: {k: v for k, v in vars(lag).items() if k != "histogram"} for t, lag in activity.lag.items()}
        ),  # fmt: skip
        "events_per_hour": dg.MetadataValue.json(
            {t: [sum(hours[h].values()) for h in range(24)] for t, hours in activity.hourly.items()}
        ),
    }
    if report.data_docs:
        metadata["data_docs"] = dg.MetadataValue.path(str(report.data_docs))
    return metadata


@dg.asset(
    key=REPORT,
    deps=[CANONICAL],
    partitions_def=DAILY,
    backfill_policy=SINGLE_RUN,
    group_name="quality",
    kinds={"spark", "html"},
)
def quality_report(
    context: dg.AssetExecutionContext,
    pyspark: LazyPySparkResource,
    storage: LakeStorageResource,
    quality: QualityConfigResource,
) -> dg.MaterializeResult:
    """`<lake>/reports/dt=.../index.html` and `summary.json` for each day of the run (rules, volume, lag)."""
    engine = quality_engine(pyspark, storage.lake_root)
    for dt in context.partition_keys:
        report = write_day_report(engine, storage.lake_root, dt, thresholds=quality.thresholds(),
                                  great_expectations=quality.data_docs)  # fmt: skip
        context.add_asset_metadata(report_metadata(report), partition_key=dt)
    return dg.MaterializeResult()
