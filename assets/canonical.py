"""The canonical change table asset: the run's days of every catalog topic, decoded in one pass per topic."""

from collections.abc import Mapping, Sequence

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.keys import CANONICAL, raw_key
from assets.partitions import DAILY, SINGLE_RUN
from cdc_pipelines.decode.days import decode_days
from cdc_pipelines.engines.choice import SPARK, asked
from cdc_pipelines.extract.catalog import Topic
from cdc_pipelines.lake.delta_rs import local_table_path
from cdc_pipelines.lake.io import CATALOG_DATABASE, table_version
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.runtime.storage import join
from resources import LakeStorageResource, TopicCatalogResource


def settings_without_spark(spark_config: Mapping[str, object]) -> dict[str, str] | None:
    """The settings a decode or encode without Spark reads (the `cdc.` ones), or None where the session's
    settings ask for Spark: `cdc.engine=spark` (`engines.choice`), a master other than local, or a catalog
    database to register the tables in."""
    conf = {k: str(v) for k, v in spark_config.items()}
    if asked(conf) == SPARK or not conf.get("spark.master", "local").startswith("local") or conf.get(CATALOG_DATABASE):
        return None
    return {k: v for k, v in conf.items() if not k.startswith("spark.")}


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
        """Decode the run's days of raw extracts into `changes/` and `rejects/` (those dt overwritten): a
        local day without Spark where `decode` would, the rest by Spark."""
        local = settings_without_spark(pyspark.spark_config)
        lake = storage.lake_root

        def session():  # the JVM started only where a day needs it
            return pyspark.spark_session

        by_day, committed = decode_days(
            session, catalog.topics(), storage.raw_partition, lake, context.partition_keys, local_conf=local
        )
        # the counts of a day without Spark (or of a quiet topic) need no session on a local lake
        counts_session = None if local is not None and local_table_path(lake) is not None else session()
        for dt, per_topic in by_day.items():
            # the conservation check compares these with what the lake holds
            write_counts(counts_session, lake, dt, {t: c for t, c in per_topic.items() if (dt, t) not in committed})
            totals = {k: sum(c[k] for c in per_topic.values()) for k in MESSAGE_COUNTS}
            context.add_asset_metadata({**totals, "per_topic": dg.MetadataValue.json(per_topic)}, partition_key=dt)
        metadata = {}
        for name in (CHANGES_DIR, REJECTS_DIR, COUNTS_DIR):
            path = join(lake, name)
            metadata[name] = dg.MetadataValue.path(path)
            metadata[f"{name}_delta_version"] = table_version(counts_session, path)
        return dg.MaterializeResult(metadata=metadata)

    return canonical_changes
