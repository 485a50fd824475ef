"""The canonical change table asset: the run's days of every catalog topic, decoded in one pass per topic."""

from collections.abc import Sequence

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.keys import CANONICAL, raw_key
from assets.partitions import DAILY, SINGLE_RUN
from cdc_pipelines.decode.days import decode_days
from cdc_pipelines.extract.catalog import Topic
from cdc_pipelines.lake.io import table_version
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.runtime.storage import join
from resources import LakeStorageResource, TopicCatalogResource


def canonical_asset(topics: Sequence[Topic]) -> dg.AssetsDefinition:
    """`canonical_changes`, downstream of the raw extract asset of each topic."""

    @dg.asset(
        key=CANONICAL,
        deps=[raw_key(t.name) for t in topics],
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
        group_name="canonical",
        kinds={"spark", "deltalake"},
    )
    def canonical_changes(
        context: dg.AssetExecutionContext,
        pyspark: LazyPySparkResource,
        storage: LakeStorageResource,
        catalog: TopicCatalogResource,
    ) -> dg.MaterializeResult:
        """Decode the run's days of raw extracts into `changes/` and `rejects/` (those dt overwritten)."""
        by_day = decode_days(
            pyspark.spark_session, catalog.topics(), storage.raw_partition, storage.lake_root, context.partition_keys
        )
        for dt, per_topic in by_day.items():
            # the conservation check compares these with what the lake holds
            write_counts(pyspark.spark_session, storage.lake_root, dt, per_topic)
            totals = {k: sum(c[k] for c in per_topic.values()) for k in MESSAGE_COUNTS}
            context.add_asset_metadata({**totals, "per_topic": dg.MetadataValue.json(per_topic)}, partition_key=dt)
        metadata = {}
        for name in (CHANGES_DIR, REJECTS_DIR, COUNTS_DIR):
            path = join(storage.lake_root, name)
            metadata[name] = dg.MetadataValue.path(path)
            metadata[f"{name}_delta_version"] = table_version(pyspark.spark_session, path)
        return dg.MaterializeResult(metadata=metadata)

    return canonical_changes
