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
events are compared field by field (`delivery.mark_redeliveries`, on both engines), and only the files
holding a repeat are written again (a MERGE, `mark_duplicates`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.model.meta_keys import DUPLICATE_OF

# the largest set of repeats joined to the events as a broadcast (beyond it, a shuffle join)
BROADCAST_ROWS = 200_000


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
