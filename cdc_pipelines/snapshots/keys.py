"""Key columns for events whose format names none: from `keys` (the catalog's `keys:`, `--keys`) or,
for topics read through kcat envelopes, from the Kafka message key.

A Debezium Kafka key is the row's key as JSON, `{"id": 1001}`, or with its schema, `{"schema": {...},
"payload": {"id": 1001}}`: its field names, in order, are the key columns. Names an event carries win,
then configured `keys`, then the Kafka key; an event left without any is in a table `apply` skips.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.model.meta_keys import KAFKA_KEY
from cdc_pipelines.snapshots.schema import TABLE


def _unnamed() -> Column:
    return F.coalesce(F.size("pk_columns"), F.lit(0)) <= 0


def with_keys(changes: DataFrame, keys: Mapping[str, Sequence[str]] | None) -> DataFrame:
    """`changes` with `pk_columns` set from `keys` (`{"db.table": [col, ...]}`, the table named as in
    `apply.day_tables`' skipped tables) where an event names none."""
    if not keys:
        return changes
    label = F.concat_ws(".", *[F.col(c) for c in TABLE])
    configured = F.create_map(*[x for name, cols in keys.items() for x in (F.lit(name), F.array(*map(F.lit, cols)))])
    return changes.withColumn("pk_columns", F.when(~_unnamed(), F.col("pk_columns")).otherwise(
        F.try_element_at(configured, label).cast("array<string>")
    ))  # fmt: skip


def kafka_key_columns(key: Column) -> Column:
    """The field names of a Kafka key's JSON object (of its `payload` where the key carries its schema);
    null for a key that is no JSON object."""
    enveloped = (F.get_json_object(key, "$.schema.type") == "struct") & F.get_json_object(key, "$.payload").isNotNull()
    fields = F.json_object_keys(F.when(enveloped, F.get_json_object(key, "$.payload")).otherwise(key))
    return F.when(F.size(fields) > 0, fields)


def with_kafka_keys(changes: DataFrame, topics: Collection[str] | bool) -> DataFrame:
    """`changes` with `pk_columns` taken from the Kafka message key (`meta['cdc.kafka.key']`) where an
    event names none, for the events of `topics` (True: of every topic)."""
    if not topics:
        return changes
    chosen = F.lit(True) if topics is True else F.col("source_topic").isin(sorted(topics))
    key = F.try_element_at(F.col("meta"), F.lit(KAFKA_KEY))
    return changes.withColumn(
        "pk_columns", F.when(_unnamed() & chosen, kafka_key_columns(key)).otherwise(F.col("pk_columns"))
    )
