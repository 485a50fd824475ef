"""One asset per catalog topic: the day's raw extract folder, observed (files and bytes), not copied."""

import dagster as dg

from assets.keys import raw_key
from assets.partitions import DAILY, SINGLE_RUN
from cdc_pipelines.decode.days import extract_stats
from cdc_pipelines.extract.catalog import Topic
from resources import LakeStorageResource
from resources.spark import ProjectSparkResource


def raw_extract_asset(topic: Topic) -> dg.AssetsDefinition:
    key = raw_key(topic.name)

    @dg.asset(
        key=key,
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
        group_name="raw",
        kinds={"file"},
        description=f"Raw extracts of topic {topic.name} ({topic.format}) under <raw_root>/{topic.name}/dt=*/",
    )
    def _raw(
        context: dg.AssetExecutionContext, storage: LakeStorageResource, pyspark: ProjectSparkResource
    ) -> dg.MaterializeResult:
        total = {"files": 0, "bytes": 0}
        for dt in context.partition_keys:
            folder = storage.raw_partition(topic.name, dt)
            stats = extract_stats(pyspark.spark_session, folder)  # listed by Hadoop: any storage
            context.add_asset_metadata({**stats, "path": dg.MetadataValue.path(str(folder))}, partition_key=dt)
            total = {k: total[k] + stats[k] for k in total}
        context.log.info(f"{topic.name}: {total['files']} files, {total['bytes']} bytes over {context.partition_keys}")
        return dg.MaterializeResult(metadata={"format": topic.format, "envelope": topic.envelope or "none"})

    return _raw
