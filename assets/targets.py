"""One asset per target format of the catalog: the run's days of canonical events re-encoded."""

from collections.abc import Sequence

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.canonical import settings_without_spark
from assets.keys import CANONICAL, target_key
from assets.partitions import DAILY, SINGLE_RUN
from cdc_pipelines.decode.days import encode_days, target_path
from cdc_pipelines.extract.catalog import Topic
from resources import LakeStorageResource, TopicCatalogResource


def target_formats(topics: Sequence[Topic]) -> list[str]:
    """Every format some topic must be re-emitted in, in catalog order."""
    return list(dict.fromkeys(f for t in topics for f in t.targets))


def target_asset(format_id: str) -> dg.AssetsDefinition:
    @dg.asset(
        key=target_key(format_id),
        deps=[CANONICAL],
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
        group_name="targets",
        kinds={"spark", "json"},
        description=f"The canonical events of the topics that list {format_id}, re-encoded as {format_id}",
    )
    def _target(
        context: dg.AssetExecutionContext,
        pyspark: LazyPySparkResource,
        storage: LakeStorageResource,
        catalog: TopicCatalogResource,
    ) -> dg.MaterializeResult:
        topics = [t.name for t in catalog.topics() if format_id in t.targets]

        def session():  # the JVM started only where the days need it
            return pyspark.spark_session

        by_day = encode_days(session, storage.lake_root, format_id, topics, context.partition_keys,
                             local_conf=settings_without_spark(pyspark.spark_config))  # fmt: skip
        for dt, counts in by_day.items():
            context.add_asset_metadata(counts, partition_key=dt)
        path = target_path(storage.lake_root, format_id)
        return dg.MaterializeResult(
            metadata={"path": dg.MetadataValue.path(str(path)), "topics": dg.MetadataValue.json(topics)}
        )

    return _target


def target_assets(topics: Sequence[Topic]) -> list[dg.AssetsDefinition]:
    return [target_asset(f) for f in target_formats(topics)]
