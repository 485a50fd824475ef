"""One day of a Kafka topic read by Spark's Kafka batch source into the lines the decode takes.

The day's offsets are planned once (`kafka_plan`, looked up through Spark's own consumer: `kafka_lookup`) and
read as fixed ranges; each record becomes its `kcat -J` line by the rule the native reader runs too
(`kafka_lines.kcat_line`, here in `mapInArrow`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.extract.kafka_days import DayBounds
from cdc_pipelines.extract.kafka_lines import RECORD_SCHEMA, kcat_lines, lineage_file
from cdc_pipelines.extract.kafka_lookup import SparkLookup
from cdc_pipelines.extract.kafka_plan import PlannedRange, day_offsets, plan_ranges, read_counts, reading
from cdc_pipelines.extract.kafka_source import KafkaSource
from cdc_pipelines.extract.lines import LINE_SCHEMA, MESSAGE, ExtractLines
from cdc_pipelines.formats.base import Codec
from cdc_pipelines.model.kafka_offsets import PartitionOffsets


@dataclass
class KafkaDay:
    """A day read from Kafka: the lines to decode and the offsets read per partition."""

    lines: ExtractLines
    offsets: list[PartitionOffsets]
    kafka_topic: str


def _offsets_json(topic: str, offsets: Mapping[int, int]) -> str:
    return json.dumps({topic: {str(p): o for p, o in offsets.items()}})


def _records(spark: SparkSession, source: KafkaSource, ranges: list[PlannedRange]) -> DataFrame:
    """The records of `ranges` (Spark's Kafka batch source at fixed offsets)."""
    read = reading(ranges)
    reader = spark.read.format("kafka").options(**source.spark_options())
    return (
        reader.option("assign", json.dumps({source.topic: [r.partition for r in read]}))
        .option("startingOffsets", _offsets_json(source.topic, {r.partition: r.start_offset for r in read}))
        .option("endingOffsets", _offsets_json(source.topic, {r.partition: r.scan_end for r in read}))
        .option("includeHeaders", "true")
        .option("failOnDataLoss", "true")
        .load()
    )


def kcat_frame(records: DataFrame, codec: Codec) -> DataFrame:
    """Spark's Kafka records as kcat lines (`LINE_SCHEMA` rows, numbered by offset), by `kafka_lines.kcat_line`."""
    binary, key_base64 = codec.binary_messages, codec.decode_key is not None

    def lines(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            topics, partitions = batch.column("topic").to_pylist(), batch.column("partition").to_pylist()
            n = batch.num_rows
            yield pa.RecordBatch.from_arrays(
                [pa.array(kcat_lines(batch, binary, key_base64), pa.binary()),
                 pa.array([lineage_file(t, p) for t, p in zip(topics, partitions, strict=True)], pa.string()),
                 batch.column("offset"), pa.array([MESSAGE] * n, pa.string()), pa.nulls(n, pa.string())],
                names=LINE_SCHEMA.fieldNames(),
            )  # fmt: skip

    columns = [F.unix_millis("timestamp").alias("ts") if f.name == "ts" else F.col(f.name) for f in RECORD_SCHEMA]
    return records.select(*columns).mapInArrow(lines, LINE_SCHEMA)


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
    ranges = plan_ranges(SparkLookup(spark, source), source, bounds, recorded)
    frame, kept = spark.createDataFrame([], LINE_SCHEMA), {}
    if reading(ranges):
        ts = F.unix_millis("timestamp")
        in_day = _records(spark, source, ranges).where((ts >= bounds.start_ms) & (ts < bounds.end_ms))
        per_partition = in_day.groupBy("partition").agg(
            F.min("offset").alias("first"), F.max("offset").alias("last"), F.count("*").alias("n")
        )
        kept = {r["partition"]: (r["first"], r["last"], int(r["n"])) for r in per_partition.collect()}
        frame = kcat_frame(in_day, codec)
    offsets = day_offsets(ranges, kept, bounds)
    return KafkaDay(ExtractLines(frame=frame, read=read_counts(source.topic, offsets)), offsets, source.topic)
