"""Canonical events -> messages of a target format, in `mapInArrow` batches (no per-row UDF).

Each event goes through its target's encoder (`Codec.encode`); an event the target cannot carry is
kept as a skipped row with the reason, so written + skipped always equals the events read.
"""

from __future__ import annotations

import base64
import datetime as dt
import zoneinfo
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines.encode.avro_containers import write_avro_containers
from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import OlderSchemaMessage, Unsupported
from cdc_pipelines.lake import io
from cdc_pipelines.lake.layout import SKIPPED_DIR
from cdc_pipelines.model import meta_keys
from cdc_pipelines.runtime.arrow_maps import map_dicts
from cdc_pipelines.runtime.python_workers import no_cycle_collection
from cdc_pipelines.runtime.storage import join

SKIPPED_SCHEMA = T.StructType(
    [
        *(T.StructField(name, T.StringType()) for name in ("event_id", "source_file")),
        T.StructField("source_line", T.LongType()),
        *(T.StructField(name, T.StringType()) for name in ("skip_reason", "target", "dt", "source_topic")),
    ]
)
ENCODED_SCHEMA = T.StructType(
    [
        T.StructField("dt", T.StringType()),
        T.StructField("source_topic", T.StringType()),
        T.StructField("event_id", T.StringType()),
        T.StructField("source_file", T.StringType()),
        T.StructField("source_line", T.LongType()),
        T.StructField("row_index", T.IntegerType()),
        T.StructField("part", T.IntegerType()),
        T.StructField("message", T.StringType()),
        T.StructField("skip_reason", T.StringType()),
        T.StructField("older_schema", T.BooleanType()),
    ]
)


@dataclass
class EncodedTable:
    """The rows of an encode (ENCODED_SCHEMA): messages, and skipped events (`skip_reason` set)."""

    all_rows: DataFrame


LINEAGE = ("dt", "source_topic", "event_id", "source_file", "source_line")
# the order messages are written in: input order, a DTS Avro event's two messages in turn
ORDER = ("dt", "source_topic", "source_file", "source_line", "row_index", "part")


# where an event came from: taken over into the output as Arrow columns, never read by an encoder
_UNREAD = ("dt", "source_topic", "source_file", "source_line", "event_time_unit")


# map columns that hold one map per table, not per event: their rows share dicts (see `map_dicts`)
_PER_TABLE = frozenset({"column_types", "source_types"})
_UTC = zoneinfo.ZoneInfo("UTC")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=_UTC)


def _values(column: pa.Array, name: str) -> list:
    """A column as the Python values encoders take. UTC timestamps are built from their micros:
    pyarrow's own conversion (the same datetimes, in the same zone) took 3 us a value."""
    if pa.types.is_map(column.type):
        return map_dicts(column, shared=name in _PER_TABLE)
    if pa.types.is_timestamp(column.type) and column.type.tz == "UTC":
        micros = column.cast(pa.int64()).to_pylist()
        return [None if m is None else _EPOCH + dt.timedelta(microseconds=m) for m in micros]
    return column.to_pylist()


def _events(batch: pa.RecordBatch) -> list[dict]:
    """The batch's rows as event dicts, maps as dicts (what every encoder takes), lineage left out."""
    names = [n for n in batch.schema.names if n not in _UNREAD]
    columns = [_values(batch.column(n), n) for n in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def encoded_batch(batch: pa.RecordBatch, encoder, options: Mapping[str, str], schema: pa.Schema) -> pa.RecordBatch:
    """One batch of canonical events -> its ENCODED_SCHEMA rows: messages, or a skip reason per event."""
    events, parts, messages, reasons, row_indexes, older = [], [], [], [], [], []
    for i, event in enumerate(_events(batch)):
        row_index = meta_keys.row_index(event)
        try:
            encoded, reason = encoder(event, options), None
        except Unsupported as exc:
            encoded, reason = [None], str(exc)  # one row for the skipped event, with no message
        for part, message in enumerate(encoded):
            events.append(i)
            parts.append(part)
            messages.append(base64.b64encode(message).decode() if isinstance(message, bytes) else message)
            reasons.append(reason)
            row_indexes.append(row_index)
            older.append(isinstance(message, OlderSchemaMessage))
    lineage = batch.select(list(LINEAGE)).take(pa.array(events, pa.int32()))
    columns = [*lineage.columns, pa.array(row_indexes, pa.int32()), pa.array(parts, pa.int32())]
    columns += [pa.array(messages, pa.string()), pa.array(reasons, pa.string()), pa.array(older, pa.bool_())]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _encode_batches(format_id: str, options: Mapping[str, str]):
    """The `mapInArrow` function: Python builds only the messages; lineage columns are taken, not rebuilt."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        encoder = get_codec(format_id).encode_event
        schema = to_arrow_schema(ENCODED_SCHEMA)
        for batch in batches:
            with no_cycle_collection():
                out = encoded_batch(batch, encoder, options, schema)
            yield out

    return run


def encode_events(events: DataFrame, format_id: str, options: Mapping[str, str] | None = None) -> EncodedTable:
    """Encode canonical events (a canonical DataFrame) into `format_id` messages."""
    codec = get_codec(format_id)
    resolved = codec.resolve_options(dict(options or {}))
    codec.check_ready(resolved)
    return EncodedTable(events.mapInArrow(_encode_batches(format_id, resolved), ENCODED_SCHEMA))


def encode_report(counts: Mapping[str, int]) -> dict[str, int]:
    """An encode's figures as the commands report them: events read (encoded or skipped), messages written,
    events skipped."""
    return {"events": counts["encoded"] + counts["skipped"], "written": counts["written"], "skipped": counts["skipped"]}


def write_encoded(encoded: EncodedTable, target: str | Path, format_id: str) -> dict[str, int]:
    """Write `target/dt=/source_topic=/` (see `write_encoded_by_day`) and count written and skipped."""
    by_day = write_encoded_by_day(encoded, target, format_id).values()
    return {k: sum(c[k] for c in by_day) for k in ("written", "skipped", "encoded")}


def write_encoded_by_day(encoded: EncodedTable, target: str | Path, format_id: str) -> dict[str, dict[str, int]]:
    """Write `target/dt=/source_topic=/` as JSON lines in input order; count written and skipped per dt.

    Text is written by Spark's file committer with dynamic partition overwrite (only the partitions
    written are replaced; those of this run that get no message are removed). Binary messages (DTS
    Avro) are written as `.avro` container files of their records (the decoder reads those as it reads
    `value_b64` lines of a Kafka dump). Skipped events go to the Delta table `target/_skipped/`, with
    the reason (the table exists once an event was skipped).
    """
    target = str(target)
    messages = encoded.all_rows.where(F.col("skip_reason").isNull())
    if get_codec(format_id).containers:
        # a container file per partition is written by one task
        ordered = messages.repartition("dt", "source_topic").sortWithinPartitions(*ORDER)
    else:
        # range partitions keep input order across files (part-00000 < part-00001) while every core sorts
        # and writes; the partition columns lead the sort: the writer sorts by them anyway
        ordered = messages.repartitionByRange(*ORDER).sortWithinPartitions(*ORDER)
    encoded.all_rows.persist()
    try:
        counts = (
            encoded.all_rows.groupBy("dt", "source_topic")
            .agg(
                # an encoded event has exactly one part 0: no distinct count (it ran out of memory at 4M events)
                F.count(F.when(F.col("skip_reason").isNull() & (F.col("part") == 0), 1)).alias("encoded"),
                F.count(F.when(F.col("skip_reason").isNull(), 1)).alias("written"),
                F.count(F.when(F.col("skip_reason").isNotNull(), 1)).alias("skipped"),
            )
            .collect()
        )
        # every partition encoded is replaced in both outputs, even where one of them gets no rows
        partitions = [{"dt": r["dt"], "source_topic": r["source_topic"]} for r in counts]
        if get_codec(format_id).containers:
            write_avro_containers(ordered, target, replace=partitions)
        else:
            filled = [p for p, r in zip(partitions, counts, strict=True) if r["written"]]
            message = F.col("message")
            if get_codec(format_id).binary_messages:  # not in containers: `value_b64` lines, as a Kafka dump
                message = F.concat(F.lit('{"value_b64":"'), message, F.lit('"}'))
            lines = ordered.select(message.alias("message"), "dt", "source_topic")
            io.overwrite_file_partitions(lines, target, partitions, filled)
        if partitions:
            _replace_skipped(encoded, target, format_id, partitions, any(r["skipped"] for r in counts))
        by_day: dict[str, dict[str, int]] = {}
        for r in counts:
            day = by_day.setdefault(r["dt"], dict.fromkeys(("written", "skipped", "encoded"), 0))
            for k in day:
                day[k] += r[k]
        return by_day
    finally:
        encoded.all_rows.unpersist()


def _replace_skipped(
    encoded: EncodedTable, target: str, format_id: str, partitions: list[dict[str, str]], any_skipped: bool
) -> None:
    """Replace `partitions` of `target/_skipped/` with this run's skipped events. A run that skipped
    none reads no row for them, and creates no table: the table exists once an event was skipped, and
    an existing one still loses a rerun's old skips."""
    spark = encoded.all_rows.sparkSession
    path = join(target, SKIPPED_DIR)
    if any_skipped:
        rows = encoded.all_rows.where(F.col("skip_reason").isNotNull()).select(
            "event_id", "source_file", "source_line", "skip_reason", F.lit(format_id).alias("target"), "dt",
            "source_topic",
        )  # fmt: skip
    elif io.is_table(spark, path):
        rows = spark.createDataFrame([], SKIPPED_SCHEMA)
    else:
        return
    io.replace_partitions(rows, path, partitions, schema=SKIPPED_SCHEMA)
