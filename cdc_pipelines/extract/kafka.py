"""One day of a Kafka topic read by Spark's Kafka batch source into the lines the decode takes.

Each Kafka record becomes the `kcat -J` envelope line a file extract of it holds (topic, partition,
offset, tstype, ts, headers, key, payload), built by Spark's own JSON writer, so the codecs, tombstones,
the redelivery rule and `keys_from: kafka` see exactly what they see from a kcat file. A binary format's
value (DTS Avro) rides in the payload as the `{"value_b64": ...}` JSON line its codec reads. A record's
lineage is `kafka://TOPIC/PARTITION` and its offset.

The offsets are looked up once (`kafka_lookup`) and read as fixed ranges, so the read never depends on
when it runs: a day read before is read again at its recorded offsets (`recorded`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.extract.kafka_days import DayBounds, incomplete_message
from cdc_pipelines.extract.kafka_lookup import PartitionState, newest_timestamps, partition_states
from cdc_pipelines.extract.kafka_source import KafkaSource, KafkaSourceError
from cdc_pipelines.extract.lines import LINE_SCHEMA, MESSAGE, ExtractLines
from cdc_pipelines.formats.base import Codec
from cdc_pipelines.model.kafka_offsets import PartitionOffsets

KAFKA_ENVELOPE = "kcat"


def lineage_file(topic: str, partition: int | Column) -> str | Column:
    """The `source_file` of a record of `partition` (its `source_line` is its offset)."""
    if isinstance(partition, int):
        return f"kafka://{topic}/{partition}"
    return F.concat(F.lit(f"kafka://{topic}/"), partition.cast("string"))


@dataclass(frozen=True)
class PlannedRange:
    """The offsets of one partition to read for a day, before the read: [start_offset, scan_end)."""

    partition: int
    start_offset: int
    end_offset: int
    scan_end: int


@dataclass
class KafkaDay:
    """A day read from Kafka: the lines to decode and the offsets read per partition."""

    lines: ExtractLines
    offsets: list[PartitionOffsets]
    bounds: DayBounds
    kafka_topic: str


def day_waits_for(
    spark: SparkSession, source: KafkaSource, bounds: DayBounds, states: list[PartitionState] | None = None
) -> str | None:
    """None when the day is complete (every partition holds a message at or past its end plus its late
    seconds), else why not, naming each partition behind. What the read requires and the sensor waits for;
    `states` the partitions' states when already looked up (at the day's scan end, among others)."""
    states = partition_states(spark, source, [bounds.scan_end_ms]) if states is None else states
    behind = [s for s in states if s.at[bounds.scan_end_ms] is None]
    if not behind:
        return None
    why = incomplete_message(source.topic, bounds, newest_timestamps(spark, source, behind))
    return why or f"day {bounds.day} of topic {source.topic} is not complete"


def plan_ranges(
    spark: SparkSession,
    source: KafkaSource,
    bounds: DayBounds,
    recorded: Mapping[int, PartitionOffsets] | None = None,
) -> list[PlannedRange]:
    """The offsets to read: those `recorded` for the day (a rerun), else looked up by its timestamps.

    Fails (KafkaSourceError) when the day is not complete (unless the source allows it), or when the
    broker no longer holds offsets the day needs (retention deleted them)."""
    states = partition_states(spark, source, [bounds.start_ms, bounds.end_ms, bounds.scan_end_ms])
    if recorded:
        planned = [PlannedRange(p.partition, p.start_offset, p.end_offset, p.scan_end) for p in recorded.values()]
    else:
        why = None if source.allow_incomplete else day_waits_for(spark, source, bounds, states)
        if why:
            raise KafkaSourceError(why)
        planned = [_by_timestamps(s, bounds) for s in states]
        for state, plan in zip(states, planned, strict=True):
            # the first message kept is the day's first at or past its start: those before it were deleted,
            # and some may have been of this day (retention deletes whole segments, so mid-day is likely)
            trimmed = state.log_start > 0 and plan.start_offset == state.log_start < plan.scan_end
            if trimmed and not source.allow_incomplete:
                raise KafkaSourceError(
                    f"kafka topic {source.topic}: retention may have deleted offsets of day {bounds.day}: partition "
                    f"{state.partition} keeps offsets from {state.log_start}, the first it holds of the day"
                )
    by_partition = {s.partition: s for s in states}
    for plan in planned:
        state = by_partition.get(plan.partition)
        if state is None:
            raise KafkaSourceError(f"kafka topic {source.topic}: partition {plan.partition} no longer exists")
        if plan.start_offset < state.log_start and plan.scan_end > plan.start_offset:
            raise KafkaSourceError(
                f"kafka topic {source.topic}: retention deleted offsets of day {bounds.day}: partition "
                f"{plan.partition} starts at {state.log_start}, the day needs {plan.start_offset}"
            )
        if plan.scan_end > state.high_watermark:
            raise KafkaSourceError(
                f"kafka topic {source.topic}: partition {plan.partition} ends at {state.high_watermark}, "
                f"before offset {plan.scan_end} that day {bounds.day} read (the topic was recreated?)"
            )
    return sorted(planned, key=lambda p: p.partition)


def _by_timestamps(state: PartitionState, bounds: DayBounds) -> PlannedRange:
    """A partition's day by Kafka's time index; where no message is that late yet (an incomplete day read
    on purpose), the high watermark now."""

    def at(ts: int) -> int:
        found = state.at[ts]
        return state.high_watermark if found is None else found

    return PlannedRange(state.partition, at(bounds.start_ms), at(bounds.end_ms), at(bounds.scan_end_ms))


def _offsets_json(topic: str, offsets: Mapping[int, int]) -> str:
    return json.dumps({topic: {str(p): o for p, o in offsets.items()}})


def _records(spark: SparkSession, source: KafkaSource, ranges: list[PlannedRange]) -> DataFrame:
    """The records of `ranges` (Spark's Kafka batch source at fixed offsets)."""
    reading = [r for r in ranges if r.scan_end > r.start_offset]
    reader = spark.read.format("kafka").options(**source.spark_options())
    return (
        reader.option("assign", json.dumps({source.topic: [r.partition for r in reading]}))
        .option("startingOffsets", _offsets_json(source.topic, {r.partition: r.start_offset for r in reading}))
        .option("endingOffsets", _offsets_json(source.topic, {r.partition: r.scan_end for r in reading}))
        .option("includeHeaders", "true")
        .option("failOnDataLoss", "true")
        .load()
    )


def kcat_line(codec: Codec) -> Column:
    """A Kafka record (Spark's Kafka columns) as its `kcat -J` line, in kcat's field order; a null key,
    payload or header list is left out as kcat leaves it null (both read as absent)."""
    tstype = F.when(F.col("timestampType") == 0, "create").when(F.col("timestampType") == 1, "logappend")
    headers = F.flatten(F.transform("headers", lambda h: F.array(h["key"], h["value"].cast("string"))))
    if codec.binary_messages:
        # Spark's base64 breaks its text into MIME lines (CRLF every 76 characters): the codec takes none
        b64 = F.regexp_replace(F.base64("value"), "[\\r\\n]", "")
        payload = F.when(F.col("value").isNotNull(), F.to_json(F.struct(b64.alias("value_b64"))))
    else:
        payload = F.col("value").cast("string")
    # a binary key (Avro) in base64, which the codec's `decode_key` reads; a text key as its text
    key = F.regexp_replace(F.base64("key"), "[\\r\\n]", "") if codec.decode_key else F.col("key").cast("string")
    envelope = F.struct(
        F.col("topic"), F.col("partition"), F.col("offset"), F.coalesce(tstype, F.lit("none")).alias("tstype"),
        F.unix_millis("timestamp").alias("ts"),
        F.when(F.size("headers") > 0, headers).alias("headers"),
        key.alias("key"), payload.alias("payload"),
    )  # fmt: skip
    return F.to_json(envelope).cast("binary")


def read_kafka_day(
    spark: SparkSession,
    source: KafkaSource,
    bounds: DayBounds,
    codec: Codec,
    recorded: Mapping[int, PartitionOffsets] | None = None,
) -> KafkaDay:
    """The day's records whose timestamp is in [start, end), as kcat lines, and the offsets read.

    One Spark job counts the records per partition (the conservation check's `read`, and the offsets
    recorded); the decode reads the same fixed ranges again.
    """
    ranges = plan_ranges(spark, source, bounds, recorded)
    frame, stats = spark.createDataFrame([], LINE_SCHEMA), {}
    if any(r.scan_end > r.start_offset for r in ranges):
        ts = F.unix_millis("timestamp")
        in_day = _records(spark, source, ranges).where((ts >= bounds.start_ms) & (ts < bounds.end_ms))
        per_partition = in_day.groupBy("partition").agg(
            F.count("*").alias("n"), F.min("offset").alias("first"), F.max("offset").alias("last")
        )
        stats = {r["partition"]: r for r in per_partition.collect()}
        frame = in_day.select(
            kcat_line(codec).alias("value"),
            lineage_file(source.topic, F.col("partition")).alias("source_file"),
            F.col("offset").alias("block"),
            F.lit(MESSAGE).alias("kind"),
            F.lit(None).cast("string").alias("reason"),
        )
    offsets = []
    for r in ranges:
        got = stats.get(r.partition)
        first, last, count = (got["first"], got["last"], int(got["n"])) if got else (None, None, 0)
        offsets.append(PartitionOffsets(r.partition, r.start_offset, r.end_offset, r.scan_end, first, last, count,
                                        bounds.start_ms, bounds.end_ms))  # fmt: skip
    read = {lineage_file(source.topic, o.partition): o.messages for o in offsets if o.messages}
    return KafkaDay(ExtractLines(frame=frame, read=read), offsets, bounds, source.topic)
