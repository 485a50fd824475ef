"""The asset graph a catalog implies, its resources, the daily job and its schedule."""

import warnings
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from assets.automation import daily_schedule, day_ready_sensor
from assets.canonical import canonical_asset
from assets.quality import QUALITY_CHECKS
from assets.raw import raw_extract_asset
from assets.report import quality_report
from assets.snapshots import snapshot_anomalies_check, table_snapshots
from assets.targets import target_assets
from cdc_pipelines.extract.catalog import Topic, load_catalog
from resources import LakeStorageResource, QualityConfigResource, TopicCatalogResource, spark_resource

DAILY_JOB = "daily_cdc"
# the daily job selects every asset but the sources (`include_sources`, beta): as for partitions.py's warnings,
# the pinned Dagster and the tests stand behind it, and the warning tells a user nothing
warnings.filterwarnings("ignore", r"Parameter `include_sources` of function `AssetSelection.all`", dg.BetaWarning)


def build_assets(topics: Sequence[Topic]) -> list[dg.AssetsDefinition]:
    """Raw extract per topic -> canonical_changes -> one target per format, the day's quality report and
    the table snapshots, plus the checks."""
    return [
        *(raw_extract_asset(t) for t in topics),
        canonical_asset(topics),
        *target_assets(topics),
        quality_report,
        table_snapshots,
        *QUALITY_CHECKS,
        snapshot_anomalies_check,
    ]


def build_resources(catalog: str | Path, raw_root: str | Path, lake_root: str | Path, data_docs: bool = True) -> dict:
    """`data_docs=False` leaves the GX suite and its Data Docs out of the daily report (faster)."""
    return {
        "pyspark": spark_resource(),
        "storage": LakeStorageResource(raw_root=str(raw_root), lake_root=str(lake_root)),
        "catalog": TopicCatalogResource(path=str(catalog)),
        "quality": QualityConfigResource(data_docs=data_docs),
    }


def daily_job():
    return dg.define_asset_job(
        DAILY_JOB,
        selection=dg.AssetSelection.all(include_sources=False),  # partitioned as its assets are (DAILY)
        description="Every asset and check for one day (the schedule's job)",
    )


def build_definitions(
    catalog: str | Path, raw_root: str | Path, lake_root: str | Path, data_docs: bool = True
) -> dg.Definitions:
    """Definitions over the topics of `catalog`; a day runs once it is ready in every topic (the sensor), or
    at 02:00 UTC the next day (the schedule), whichever comes first (`assets.automation`)."""
    job, topics = daily_job(), load_catalog(catalog)
    return dg.Definitions(
        assets=build_assets(topics),
        jobs=[job],
        schedules=[daily_schedule(job)],
        sensors=[day_ready_sensor(topics, job)],
        resources=build_resources(catalog, raw_root, lake_root, data_docs),
        # one JVM for the whole run: the multiprocess executor would start one per step
        executor=dg.in_process_executor,
    )
