"""A day of a Kafka topic decoded into the lake by either engine: read, decode, write, and record what was read.

The Kafka counterpart of a files' decode for the CLI and the Dagster asset. Nothing is written until the day's
offsets are planned (`extract.kafka_plan`, at the offsets the lake recorded for it on a rerun) and the broker
answered (an unreachable broker, a missing topic, a failed login, deleted offsets or an incomplete day raise
`KafkaSourceError` first); then the changes and rejects, the counts, and last the offsets, so a day whose
offsets are recorded was written. Spark reads the day through its Kafka source; the local engine (`spark`
None, no JVM) through the native client (`extract.kafka_client`) as the kcat lines Spark's reader makes
(`extract.kafka_lines`), decoded by `decode.pool` (its lines held) and committed by delta-rs. A day of more
than `MAX_MESSAGES_SETTING` planned offsets is left to Spark (the in-process decode holds a day's rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_pipelines.decode.pool import decode_with_processes
from cdc_pipelines.decode.runner import DecodedExtract, decode_lines, write_decoded
from cdc_pipelines.extract.kafka import KafkaDay, read_kafka_day
from cdc_pipelines.extract.kafka_client import NativeLookup, check_settings, read_day_records
from cdc_pipelines.extract.kafka_days import DayBounds, KafkaDayError, day_bounds
from cdc_pipelines.extract.kafka_lines import KAFKA_ENVELOPE, kcat_lines, lineage_file
from cdc_pipelines.extract.kafka_plan import day_offsets, plan_ranges
from cdc_pipelines.extract.kafka_source import KafkaSource, KafkaSourceError
from cdc_pipelines.extract.messages import Line
from cdc_pipelines.formats import resolve_codec
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.kafka_offsets import read_offsets, write_offsets
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.model.kafka_offsets import PartitionOffsets
from cdc_pipelines.model.table_filter import TableFilter
from cdc_pipelines.runtime.settings import whole_number

# the setting of the most offsets a Kafka day may span for the local engine under `auto` (0: a day with messages
# is Spark's). The day's rows are held in memory; 100,000 canal messages are about 45 MiB of lines, 6-12 s of
# one core by the in-process decode's 18,000 per 1-2 s, where Spark costs 15-20 s before its first row
MAX_MESSAGES_SETTING = "cdc.decode.kafka_in_process_max_messages"
DEFAULT_MAX_MESSAGES = 100_000


def max_messages(conf: Mapping[str, str]) -> int:
    return whole_number(conf, MAX_MESSAGES_SETTING, DEFAULT_MAX_MESSAGES)


def needs_spark(source: KafkaSource, lake_root: str | Path) -> str | None:
    """Why the local engine cannot decode a day of `source` into `lake_root`, else None: a lake off local disk,
    or a setting the native client cannot take (`kafka_client.check_settings`)."""
    if delta_rs.local_table_path(str(lake_root)) is None:
        return f"the lake {lake_root} is not on local disk"
    return check_settings(source)


def day_to_read(
    spark: SparkSession | None, source: KafkaSource, *, topic: str, dt: str, lake_root: str | Path | None
) -> tuple[DayBounds, dict[int, PartitionOffsets]]:
    """The bounds of day `dt` in the source's zone (with its late seconds), and the offsets `lake_root` recorded
    for it (none: the day is read by timestamps), for both engines (`spark` None: delta-rs). A bad day, or a
    rerun of a day read from another Kafka topic, is a `KafkaSourceError`."""
    try:
        bounds = day_bounds(dt, source.time_zone, source.late_seconds)
    except KafkaDayError as exc:
        raise KafkaSourceError(f"kafka topic {source.topic}: {exc}") from None
    recorded: dict[int, PartitionOffsets] = {}
    if lake_root is not None:
        kafka_topic, recorded = read_offsets(spark, lake_root, dt, topic)
        if recorded and kafka_topic != source.topic:
            raise KafkaSourceError(
                f"day {dt} of topic {topic} was read from kafka topic {kafka_topic}, not {source.topic}"
            )
    return bounds, recorded


@dataclass
class KafkaDecoded:
    """A decoded Kafka day on Spark, not yet written: the decoded extract and the offsets it read."""

    decoded: DecodedExtract
    day: KafkaDay
    rerun: bool


@dataclass
class LocalKafkaDay:
    """A day read from Kafka by the native client: its kcat lines and the offsets read per partition."""

    lines: list[Line]
    offsets: list[PartitionOffsets]
    kafka_topic: str


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
    """The day `dt` of `source`, decoded as `topic` on Spark (lazy plans): at the offsets `lake_root` recorded
    for it when there are any, else by timestamps in the source's time zone."""
    codec = resolve_codec(format_id, options)
    codec.codec.check_ready(codec.options)
    bounds, recorded = day_to_read(spark, source, topic=topic, dt=dt, lake_root=lake_root)
    day = read_kafka_day(spark, source, bounds, codec.codec, recorded)
    decoded = decode_lines(day.lines, codec, topic=topic, dt=dt, envelope=KAFKA_ENVELOPE, tables=tables)
    return KafkaDecoded(decoded, day, bool(recorded))


def read_local_day(
    source: KafkaSource,
    format_id: str,
    *,
    topic: str,
    dt: str,
    lake_root: str | Path | None = None,
    options: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> LocalKafkaDay | None:
    """`decode_kafka_day` by the native client: the day as kcat lines for `format_id`, not yet decoded; None
    where its planned offsets are more than `limit` (Spark's day)."""
    codec = resolve_codec(format_id, options)
    codec.codec.check_ready(codec.options)
    bounds, recorded = day_to_read(None, source, topic=topic, dt=dt, lake_root=lake_root)
    ranges = plan_ranges(NativeLookup(source), source, bounds, recorded)
    if limit is not None and sum(r.scan_end - r.start_offset for r in ranges) > limit:
        return None
    records, kept = read_day_records(source, ranges, bounds)
    binary, key_base64 = codec.codec.binary_messages, codec.codec.decode_key is not None
    lines = []
    for batch in records.to_batches():
        values = kcat_lines(batch, binary, key_base64)
        at = zip(batch.column("partition").to_pylist(), batch.column("offset").to_pylist(), values, strict=True)
        lines += [Line(lineage_file(source.topic, p), offset, value) for p, offset, value in at]
    return LocalKafkaDay(lines, day_offsets(ranges, kept, bounds), source.topic)


def write_kafka_day(spark: SparkSession, decoded: KafkaDecoded, lake_root: str | Path) -> dict[str, int]:
    """Write the day's changes and rejects, its counts and its offsets; the counts, checked."""
    counts = write_decoded(decoded.decoded, lake_root)
    dt, topic = decoded.decoded.dt, decoded.decoded.topic
    write_counts(spark, lake_root, dt, {topic: counts})
    write_offsets(spark, lake_root, dt, topic, decoded.day.kafka_topic, decoded.day.offsets)
    return counts


def pin_kafka_day(
    spark: SparkSession | None, source: KafkaSource, format_id: str, *, topic: str, dt: str, lake_root: str | Path
) -> list[PartitionOffsets]:
    """Record the offsets of day `dt` (the recorded ones again on a rerun) without decoding: what the Dagster
    raw asset of a Kafka topic does, so the decode after it reads exactly these offsets. Raises
    `KafkaSourceError` (nothing recorded) when the broker cannot give the day."""
    if spark is None:
        day = read_local_day(source, format_id, topic=topic, dt=dt, lake_root=lake_root)
    else:
        day = decode_kafka_day(spark, source, format_id, topic=topic, dt=dt, lake_root=lake_root).day
    write_offsets(spark, lake_root, dt, topic, day.kafka_topic, day.offsets)
    return day.offsets


def decode_kafka_days(
    spark: SparkSession | None,
    source: KafkaSource,
    format_id: str,
    *,
    topic: str,
    dts: Sequence[str],
    lake_root: str | Path,
    options: Mapping[str, str] | None = None,
    tables: TableFilter | None = None,
    limit: int | None = None,
) -> dict[str, dict[str, int]] | None:
    """Decode the days `dts` of a Kafka topic into the lake, one day at a time; counts per day. `spark` None:
    by the local engine, None (nothing written) where a day spans more than `limit` offsets.

    Every day is planned (offsets looked up, completeness checked) before any is written, so a day that
    cannot be read stops the run with nothing committed."""
    if spark is not None:
        planned = [decode_kafka_day(spark, source, format_id, topic=topic, dt=dt, lake_root=lake_root,
                                    options=options, tables=tables) for dt in dts]  # fmt: skip
        return {dt: write_kafka_day(spark, decoded, lake_root) for dt, decoded in zip(dts, planned, strict=True)}
    days = []
    for dt in dts:
        day = read_local_day(source, format_id, topic=topic, dt=dt, lake_root=lake_root, options=options, limit=limit)
        if day is None:
            return None
        days.append(day)
    counts = {}
    for dt, day in zip(dts, days, strict=True):
        counts[dt] = decode_with_processes(format_id, (), topic=topic, dt=dt, out=lake_root, options=options,
                                           envelope=KAFKA_ENVELOPE, tables=tables, lines=day.lines)  # fmt: skip
        write_offsets(None, lake_root, dt, topic, day.kafka_topic, day.offsets)
    return counts
