"""Redelivered messages: an event repeating an earlier one of its topic and day is marked
`meta["cdc.duplicate_of"]` = the first one's event id, so snapshots apply it once.

canal, Maxwell, Debezium and Kafka itself deliver at least once: a producer retries, a consumer or a
connector restarts from its last checkpoint, and the same change arrives again on another line. What
identifies a delivery is the change as the message states it: every canonical field except the
event's lineage (event id, file, line), the `cdc.*` meta the run adds (Kafka partition, offset and
time; the Kafka key stays, so tombstones of different keys differ), which includes `cdc.extra` (the
message's fields the codec does not know, which a replay may set anew like the known ones), and the
fields the codec names in `delivery_fields` (what a replay sets anew: Debezium's envelope `ts_ms`,
canal's `ts` and batch `id`, OGG's `current_ts`). A source position stays in it (binlog file/pos/row,
gtid, SCN, LSN, DTS `sourcePosition` and record `id`, OMS `storeDataSequence`, DataWorks `sequenceId`),
so two changes of the same values at different positions are never taken for one; where a format has
no position, what identifies a delivery is the message text as decoded. Two rows of one message
differ by row index.

Cost on a topic without repeats: one 64-bit hash per event, computed where the event is built
(`delivery.DeliveryIdentity`), and a sort of the hashes on the driver. Where hashes repeat, only those
events are compared field by field, and only the files holding a repeat are written again (a MERGE).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from cdc_pipelines.model.meta_keys import DUPLICATE_OF, KAFKA_KEY, PREFIX

# the largest set of repeats joined to the events as a broadcast (beyond it, a shuffle join)
BROADCAST_ROWS = 200_000
_LINEAGE = ("event_id", "source_file", "source_line")
_MAPS = ("before", "after", "column_types", "source_types")


def delivery_identity(columns: Sequence[str], delivery_fields: Sequence[str] = ()) -> list[Column]:
    """The columns that identify a delivery, of a frame with the canonical `columns` and `row_index`.

    `delivery_fields` are canonical columns or `meta.<key>` names left out of the identity.
    """
    skipped = [f.removeprefix("meta.") for f in delivery_fields if f.startswith("meta.")]
    out = []
    for name in [c for c in columns if c not in _LINEAGE and c not in delivery_fields]:
        if name == "meta":
            kept = F.map_filter("meta", lambda k, _: (k == KAFKA_KEY) | ~(k.startswith(PREFIX) | k.isin(*skipped)))
            out.append(F.sort_array(F.map_entries(kept)).alias("meta"))
        elif name in _MAPS:
            # maps can be neither hashed nor compared; their key and value arrays can, taken as the map
            # holds them (map_entries copies every entry into a struct; meta's entries are sorted anyway)
            out += [F.map_keys(name).alias(f"{name}_keys"), F.map_values(name).alias(f"{name}_values")]
        else:
            out.append(F.col(name))
    return out


def find_duplicates(rows: DataFrame, delivery_fields: Sequence[str] = ()) -> DataFrame | None:
    """(event_id, duplicate_of) of every event of `rows` (canonical columns and `row_index`) repeating an
    earlier one (by file, line, row) of the same topic and day; None when none does."""
    identity = delivery_identity([c for c in rows.columns if c != "row_index"], delivery_fields) + [F.col("row_index")]
    hashed = rows.withColumn("_hash", F.xxhash64(*identity))
    repeated = hashed.groupBy("_hash").count().where(F.col("count") > 1).select("_hash")
    if repeated.isEmpty():
        return None
    candidates = hashed.join(F.broadcast(repeated), "_hash", "left_semi")
    first = F.first("event_id").over(Window.partitionBy("_identity").orderBy("source_file", "source_line", "row_index"))
    return (
        candidates.select(*_LINEAGE, "row_index", F.to_json(F.struct(*identity)).alias("_identity"))
        .select("event_id", first.alias("duplicate_of"))
        .where(F.col("event_id") != F.col("duplicate_of"))
    )


def mark_duplicates(spark: SparkSession, path: str, duplicates: DataFrame, within: str) -> None:
    """Set `meta["cdc.duplicate_of"]` on the events of the Delta table at `path` that `duplicates`
    names, in the partitions the SQL predicate `within` selects: one MERGE of those rows alone."""
    from delta.tables import DeltaTable

    count = duplicates.count()
    repeats = F.broadcast(duplicates) if count <= BROADCAST_ROWS else duplicates
    marked = F.map_concat(F.coalesce("t.meta", F.create_map().cast("map<string,string>")),
                          F.create_map(F.lit(DUPLICATE_OF), F.col("d.duplicate_of")))  # fmt: skip
    (
        DeltaTable.forPath(spark, path).alias("t")
        .merge(repeats.alias("d"), f"t.event_id = d.event_id AND ({within})")
        .whenMatchedUpdate(set={"meta": marked})
        .execute()
    )  # fmt: skip
