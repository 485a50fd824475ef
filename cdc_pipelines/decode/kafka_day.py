"""Decode one day of a Kafka topic into the lake on Spark: read, decode, write, and record what was read
(the local engine's day: `decode.kafka_local`).

The Kafka counterpart of `decode_files` + `write_decoded` for the CLI and the Dagster asset. Nothing is
written until the day's offsets are planned and the broker answered (an unreachable broker, a missing
topic, a failed login, deleted offsets or an incomplete day raise `KafkaSourceError` first); then the
changes and rejects, the counts, and last the offsets, so a day whose offsets are recorded was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_pipelines.decode.kafka_local import day_to_read
from cdc_pipelines.decode.runner import DecodedExtract, decode_lines, write_decoded
from cdc_pipelines.extract.kafka import KafkaDay, read_kafka_day
from cdc_pipelines.extract.kafka_lines import KAFKA_ENVELOPE
from cdc_pipelines.extract.kafka_source import KafkaSource
from cdc_pipelines.formats import resolve_codec
from cdc_pipelines.lake.kafka_offsets import write_offsets
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.model.kafka_offsets import PartitionOffsets
from cdc_pipelines.model.table_filter import TableFilter


@dataclass
class KafkaDecoded:
    """A decoded Kafka day, not yet written: the decoded extract and the offsets it read."""

    decoded: DecodedExtract
    day: KafkaDay
    rerun: bool


def decode_kafka_day(
    spark: SparkSession,
    source: KafkaSource,
    format_id: str,
    *,
    topic: str,
    dt: str,
    lake_root: str | Path | None = None,
    options: dict[str, str] | None = None,
    tables: TableFilter | None = None,
) -> KafkaDecoded:
    """The day `dt` of `source`, decoded as `topic` (lazy plans): at the offsets `lake_root` recorded for
    it when there are any, else by timestamps in the source's time zone."""
    codec = resolve_codec(format_id, options)
    codec.codec.check_ready(codec.options)
    bounds, recorded = day_to_read(spark, source, topic=topic, dt=dt, lake_root=lake_root)
    day = read_kafka_day(spark, source, bounds, codec.codec, recorded)
    decoded = decode_lines(day.lines, codec, topic=topic, dt=dt, envelope=KAFKA_ENVELOPE, tables=tables)
    return KafkaDecoded(decoded, day, bool(recorded))


def write_kafka_day(spark: SparkSession, decoded: KafkaDecoded, lake_root: str | Path) -> dict[str, int]:
    """Write the day's changes and rejects, its counts and its offsets; the counts, checked."""
    counts = write_decoded(decoded.decoded, lake_root)
    dt, topic = decoded.decoded.dt, decoded.decoded.topic
    write_counts(spark, lake_root, dt, {topic: counts})
    write_offsets(spark, lake_root, dt, topic, decoded.day.kafka_topic, decoded.day.offsets)
    return counts


def pin_kafka_day(
    spark: SparkSession, source: KafkaSource, format_id: str, *, topic: str, dt: str, lake_root: str | Path
) -> list[PartitionOffsets]:
    """Record the offsets of day `dt` (the recorded ones again on a rerun) without decoding: what the Dagster
    raw asset of a Kafka topic does, so the decode after it reads exactly these offsets. Raises
    `KafkaSourceError` (nothing recorded) when the broker cannot give the day."""
    decoded = decode_kafka_day(spark, source, format_id, topic=topic, dt=dt, lake_root=lake_root)
    write_offsets(spark, lake_root, dt, topic, decoded.day.kafka_topic, decoded.day.offsets)
    return decoded.day.offsets


def decode_kafka_days(
    spark: SparkSession,
    source: KafkaSource,
    format_id: str,
    *,
    topic: str,
    dts: list[str],
    lake_root: str | Path,
    options: dict[str, str] | None = None,
    tables: TableFilter | None = None,
) -> dict[str, dict[str, int]]:
    """Decode the days `dts` of a Kafka topic into the lake, one day at a time; counts per day.

    Every day is planned (offsets looked up, completeness checked) before any is written, so a day that
    cannot be read stops the run with nothing committed."""
    planned = [decode_kafka_day(spark, source, format_id, topic=topic, dt=dt, lake_root=lake_root, options=options,
                                tables=tables) for dt in dts]  # fmt: skip
    return {dt: write_kafka_day(spark, decoded, lake_root) for dt, decoded in zip(dts, planned, strict=True)}
