"""One asset per catalog topic: the day's raw extract folder, observed (files and bytes), not copied; for a
topic read from Kafka, the day's offsets, looked up once and recorded so the decode reads exactly them."""

import dagster as dg

from assets.canonical import settings_without_spark
from assets.keys import raw_key
from assets.partitions import DAILY, SINGLE_RUN
from cdc_pipelines.decode.days import extract_stats
from cdc_pipelines.decode.kafka_day import needs_spark, pin_kafka_day
from cdc_pipelines.extract.catalog import Topic
from cdc_pipelines.model.kafka_offsets import summarize
from resources import LakeStorageResource
from resources.spark import ProjectSparkResource


def raw_extract_asset(topic: Topic) -> dg.AssetsDefinition:
    key = raw_key(topic.name)

    @dg.asset(
        key=key,
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
        group_name="raw",
        kinds={"file"} if topic.kafka is None else {"kafka"},
        description=(
            f"Raw extracts of topic {topic.name} ({topic.format}) under <raw_root>/{topic.name}/dt=*/"
            if topic.kafka is None
            else f"The day's offsets of Kafka topic {topic.kafka.topic} ({topic.format}), kept in lake/kafka_offsets"
        ),
    )
    def _raw(
        context: dg.AssetExecutionContext, storage: LakeStorageResource, pyspark: ProjectSparkResource
    ) -> dg.MaterializeResult:
        if topic.kafka is not None:
            return _kafka_days(context, storage, pyspark)
        total = {"files": 0, "bytes": 0}
        for dt in context.partition_keys:
            folder = storage.raw_partition(topic.name, dt)
            stats = extract_stats(lambda: pyspark.spark_session, folder)  # a local folder without a JVM
            context.add_asset_metadata({**stats, "path": dg.MetadataValue.path(str(folder))}, partition_key=dt)
            total = {k: total[k] + stats[k] for k in total}
        context.log.info(f"{topic.name}: {total['files']} files, {total['bytes']} bytes over {context.partition_keys}")
        return dg.MaterializeResult(metadata={"format": topic.format, "envelope": topic.envelope or "none"})

    def _kafka_days(context, storage, pyspark) -> dg.MaterializeResult:
        """Record each day's offsets (`lake/kafka_offsets`), which the decode then reads; per day, the
        offsets and message count of each partition. Secrets never reach the metadata (`describe`)."""
        local = settings_without_spark(pyspark.spark_config) is not None
        native = local and needs_spark(topic.kafka, storage.lake_root) is None
        for dt in context.partition_keys:
            spark = None if native else pyspark.spark_session  # None: the native client and delta-rs, no JVM
            offsets = pin_kafka_day(spark, topic.kafka, topic.format, topic=topic.name, dt=dt,
                                    lake_root=storage.lake_root)  # fmt: skip
            context.add_asset_metadata(
                {"messages": sum(o.messages for o in offsets), "partitions": dg.MetadataValue.json(summarize(offsets))},
                partition_key=dt,
            )
        context.log.info(f"{topic.name}: offsets of {context.partition_keys} from {topic.kafka.describe()}")
        return dg.MaterializeResult(metadata={"format": topic.format, "source": topic.kafka.describe()})

    return _raw
