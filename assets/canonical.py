"""The canonical change table asset: one day of every catalog topic, decoded."""

from pathlib import Path

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.partitions import DAILY
from cdc_pipelines.pipeline import CHANGES_DIR, REJECTS_DIR, decode_partition
from cdc_pipelines.run_counts import write_counts
from resources import LakeStorageResource, TopicCatalogResource


@dg.asset(partitions_def=DAILY, group_name="canonical", kinds={"spark", "parquet"})
def canonical_changes(
    context: dg.AssetExecutionContext,
    pyspark: LazyPySparkResource,
    storage: LakeStorageResource,
    catalog: TopicCatalogResource,
) -> dg.MaterializeResult:
    """Decode the day's raw extracts of every topic into `changes/` and `rejects/` (dt overwritten)."""
    per_topic = decode_partition(
        pyspark.spark_session, catalog.topics(), storage.raw_partition, storage.lake_root, context.partition_key
    )
    # the conservation check compares these with what the lake holds
    write_counts(storage.lake_root, context.partition_key, per_topic)
    totals = {k: sum(c[k] for c in per_topic.values()) for k in ("read", "decoded", "rejected", "events")}
    return dg.MaterializeResult(
        metadata={
            **totals,
            "per_topic": dg.MetadataValue.json(per_topic),
            "changes": dg.MetadataValue.path(str(Path(storage.lake_root) / CHANGES_DIR)),
            "rejects": dg.MetadataValue.path(str(Path(storage.lake_root) / REJECTS_DIR)),
        }
    )
