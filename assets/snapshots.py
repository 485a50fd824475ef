"""`table_snapshots`: each source table's current and history Delta tables, the day MERGEd into them.

It depends on its own previous partition, so a backfill launched from the UI applies days in order
(under the single-run policy one run gets the range and applies it in order), and on
`canonical_changes`. Its anomalies are a WARN check: lost or duplicated upstream events are worth a
look, not a stopped pipeline.
"""

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.keys import CANONICAL, SNAPSHOTS
from assets.partitions import DAILY, SINGLE_RUN
from cdc_pipelines.engines.choice import LOCAL, Run, asked, choose
from cdc_pipelines.engines.choice import SNAPSHOTS as SNAPSHOT_STEP
from cdc_pipelines.extract.catalog import kafka_key_topics, snapshot_keys
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.run import snapshots_root
from cdc_pipelines.snapshots.store import read_summary
from resources import LakeStorageResource, TopicCatalogResource

PREVIOUS_DAY = dg.TimeWindowPartitionMapping(start_offset=-1, end_offset=-1)
FIGURES = ("tables", "rows", "applied", "anomalies")


@dg.asset(
    key=SNAPSHOTS,
    deps=[CANONICAL, dg.AssetDep(SNAPSHOTS, partition_mapping=PREVIOUS_DAY)],
    partitions_def=DAILY,
    backfill_policy=SINGLE_RUN,
    group_name="snapshots",
    kinds={"spark", "deltalake"},
)
def table_snapshots(
    context: dg.AssetExecutionContext,
    pyspark: LazyPySparkResource,
    storage: LakeStorageResource,
    catalog: TopicCatalogResource,
) -> dg.MaterializeResult:
    """Apply the run's days of the `snapshot: true` topics to the tables' previous snapshots (in order), on the
    engine the engine table names (`engines.choice`: `cdc.engine` among the resource's Spark settings)."""
    topics = [t.name for t in catalog.topics() if t.snapshot]
    keys, kafka_keys = snapshot_keys(catalog.topics()), kafka_key_topics(catalog.topics())
    policies = {t.name: t.schema_changes for t in catalog.topics() if t.snapshot}
    dialects = {t.name: t.ddl_dialect for t in catalog.topics() if t.snapshot}
    routes = {t.name: t.routes for t in catalog.topics() if t.snapshot and t.routes}
    conf = {k: str(v) for k, v in pyspark.spark_config.items()}
    run = Run(SNAPSHOT_STEP, storage.lake_root, None, conf, dts=tuple(context.partition_keys))
    spark = None if choose(run, asked(conf)) == LOCAL else pyspark.spark_session
    days = snapshot_days(spark, storage.lake_root, context.partition_keys, topics=topics, keys=keys,
                         kafka_keys=kafka_keys, schema_changes=policies, ddl_dialects=dialects,
                         routes=routes)  # fmt: skip
    for dt, day in days.items():
        if dt not in context.partition_keys:
            context.log.info(f"re-applied {dt}, a later day already applied, on top of the backfilled days")
            continue
        figures = {k: day[k] for k in FIGURES}
        extra = {"skipped_tables": dg.MetadataValue.json(day["skipped_tables"]),
                 "per_table": dg.MetadataValue.json(day["per_table"])}  # fmt: skip
        context.add_asset_metadata({**figures, **extra}, partition_key=dt)
    return dg.MaterializeResult(
        metadata={"path": dg.MetadataValue.path(snapshots_root(storage.lake_root)), "topics": topics}
    )


def _passed(summary: dict | None) -> bool:
    return summary is not None and summary["anomalies"] == 0


def _metadata(summary: dict | None) -> dict:
    if summary is None:
        return {"missing": "the day was never applied"}
    per_table = {t: v["anomalies"] for t, v in summary["per_table"].items() if v["anomalies"]}
    return {"anomalies": summary["anomalies"], "per_table": dg.MetadataValue.json(per_table),
            "skipped_tables": dg.MetadataValue.json(summary["skipped_tables"])}  # fmt: skip


CHECK = (
    "no UPDATE/DELETE of a missing key, no INSERT of an existing one, no late event, no value failing its type, "
    "no DDL left unread"
)


@dg.asset_check(
    asset=SNAPSHOTS, name="snapshot_anomalies_check", blocking=False, partitions_def=DAILY, description=CHECK
)
def snapshot_anomalies_check(context: dg.AssetCheckExecutionContext, storage: LakeStorageResource):
    """The day's anomaly counts; in a ranged run, each day's evaluation and then the run's summary."""
    warn = dg.AssetCheckSeverity.WARN
    root = snapshots_root(storage.lake_root)
    summaries = {dt: read_summary(root, dt) for dt in context.partition_keys}
    if context.has_partition_key:
        summary = summaries[context.partition_key]
        yield dg.AssetCheckResult(passed=_passed(summary), severity=warn, metadata=_metadata(summary))
        return
    for dt, summary in summaries.items():
        yield dg.AssetCheckEvaluation(
            asset_key=SNAPSHOTS, check_name="snapshot_anomalies_check", passed=_passed(summary),
            metadata=_metadata(summary), severity=warn, blocking=False, partition=dt,
            target_materialization_data=None,
        )  # fmt: skip
    failed = sorted(dt for dt, s in summaries.items() if not _passed(s))
    yield dg.AssetCheckResult(passed=not failed, severity=warn, metadata={"failed_days": dg.MetadataValue.json(failed)})
