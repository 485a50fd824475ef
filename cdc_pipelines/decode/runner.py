"""Read -> decode -> write on Spark: the one chain the CLI and the Dagster assets both call.

Spark reads the lines (or DTS Avro containers) and hands them to the Python codecs in Arrow
batches (`mapInArrow`): each line becomes its events or one reject (`extracts.rows.decoded_rows`).
Spark then does what needs the whole dataset: split-update halves are brought together by key (one
shuffle of every decoded row, halves sorted first, then `messages.pair_halves` over each key's halves
in input order), the conservation counts, and the partitioned, atomic writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Accumulator, StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines.decode.messages import pair_halves
from cdc_pipelines.decode.redeliveries import find_duplicates, mark_duplicates
from cdc_pipelines.decode.rows import decoded_rows
from cdc_pipelines.decode.table_filter import TableFilter
from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.extract.lines import ExtractLines, LineNumbering, read_extract_lines
from cdc_pipelines.extract.messages import check_envelope
from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.base import max_message_chars
from cdc_pipelines.lake import io
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.model.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.runtime.arrow_maps import map_array, map_dicts
from cdc_pipelines.runtime.python_workers import no_cycle_collection
from cdc_pipelines.runtime.storage import join

# Delta keeps min/max statistics (for skipping files in queries) of these columns only: by default it
# takes the first 32, and computing them for the long ids and paths cost 40% of writing the changes
STATS_COLUMNS = {CHANGES_DIR: "op,db,table_name,event_time,sync_time,source_line", REJECTS_DIR: "source_line"}
_TEXT = T.StringType()
_TEXT_MAP = T.MapType(_TEXT, _TEXT)
_EVENT_FIELDS = [f for f in CANONICAL_SCHEMA.fields if f.name not in ("source_format", "source_topic", "dt")]
# every column nullable: a reject's row leaves the event's columns empty
DECODED_SCHEMA = T.StructType(
    [
        *[T.StructField(f.name, f.dataType, True) for f in _EVENT_FIELDS],
        T.StructField("row_index", T.IntegerType()),
        T.StructField("pair_key", _TEXT),
        T.StructField("messages", T.IntegerType()),
        T.StructField("reject_reason", _TEXT),
        T.StructField("raw", _TEXT),
        T.StructField("raw_encoding", _TEXT),
    ]
)
_ARROW_SCHEMA = to_arrow_schema(DECODED_SCHEMA, timezone="UTC")


class ConservationError(RuntimeError):
    """Messages read != decoded + rejected + filtered: something was lost or counted twice."""


@dataclass
class DecodedExtract:
    """Canonical events and rejects of one extract, not yet written (lazy Spark plans).

    `read` is the number of messages each input file holds (counted by Spark before decoding), the
    left side of the conservation check.
    """

    events: DataFrame
    rejects: DataFrame
    combined: DataFrame
    format_id: str
    topic: str
    dt: str | None = None
    read: dict[str, int] = field(default_factory=dict)


_COLUMNS = itemgetter(*_ARROW_SCHEMA.names)


def rows_to_batch(rows: list[dict]) -> pa.RecordBatch:
    """Decoded rows (dicts holding every DECODED_SCHEMA column) -> one Arrow batch, column by column."""
    if not rows:
        return pa.RecordBatch.from_pylist([], schema=_ARROW_SCHEMA)
    columns = []
    for f, values in zip(_ARROW_SCHEMA, zip(*map(_COLUMNS, rows), strict=True), strict=True):
        columns.append(map_array(values) if pa.types.is_map(f.type) else pa.array(values, f.type))
    return pa.RecordBatch.from_arrays(columns, schema=_ARROW_SCHEMA)


def batch_to_rows(batch: pa.RecordBatch) -> list[dict]:
    """An Arrow batch of DECODED_SCHEMA -> rows (maps as dicts, times as epoch micros)."""
    names = batch.schema.names
    columns = []
    for name in names:
        column = batch.column(name)
        if pa.types.is_timestamp(column.type):
            column = column.cast(pa.int64())
        columns.append(map_dicts(column) if pa.types.is_map(column.type) else column.to_pylist())
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _decode_batches(
    format_id: str,
    topic: str,
    options: Mapping[str, str],
    envelope: str | None,
    numbering: LineNumbering,
    counter: Accumulator | None = None,
):
    """The `mapInArrow` function over extract lines: events and rejects of each batch of lines.

    The message size limit is read here, on the driver: a Python worker's environment is its own.
    """
    limit = max_message_chars()

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        lines = numbering.lines()
        for batch in batches:
            if counter is not None:
                counter.add(batch.num_rows)
            with no_cycle_collection():
                decoded = rows_to_batch(list(decoded_rows(format_id, topic, lines(batch), options, envelope, limit)))
            yield decoded

    return run


def _half_mask(batch: pa.RecordBatch) -> pa.Array:
    return pc.and_(pc.is_valid(batch.column("pair_key")), pc.is_null(batch.column("reject_reason")))


def _pair_batches(update_has_before: bool):
    """The `mapInArrow` function over a partition sorted halves first (by key and input order): the
    halves are paired in Python, every other row passes through as Arrow, never turned into dicts."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rest: list[pa.RecordBatch] = []

        def halves() -> Iterator[dict]:
            for batch in batches:
                mask = _half_mask(batch)
                yield from batch_to_rows(batch.filter(mask))
                others = batch.filter(pc.invert(mask))
                if others.num_rows:  # halves sort first: no later batch of this partition holds one
                    rest.append(others)
                    return

        out: list[dict] = []
        with no_cycle_collection():
            for row in pair_halves(halves(), update_has_before):
                out.append(row)
                if len(out) >= 4096:
                    yield rows_to_batch(out)
                    out = []
            if out:
                yield rows_to_batch(out)
        yield from rest
        yield from batches

    return run


def pair_split_updates(decoded: DataFrame, update_has_before: bool) -> DataFrame:
    """Fold each split update's before half into its after half, wherever the halves sit.

    One shuffle of every row, so the codecs run once (a branch for the halves and one for the rest
    would each run them): halves by pair key, sorted first and by input order within a key; other
    rows spread by their lineage, passed through untouched.
    """
    is_half = F.col("pair_key").isNotNull() & F.col("reject_reason").isNull()
    lineage = F.xxhash64("source_file", "source_line", "row_index").cast("string")
    spread = F.when(is_half, F.col("pair_key")).otherwise(lineage)
    return (
        decoded.repartition(spread)
        .sortWithinPartitions(is_half.desc(), "pair_key", "source_file", "source_line")
        .mapInArrow(_pair_batches(update_has_before), DECODED_SCHEMA)
    )


def decode_lines(
    spark: SparkSession,
    lines: ExtractLines,
    format_id: str,
    *,
    topic: str,
    dt: str | Column,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> DecodedExtract:
    """Decode extract lines into canonical events and rejects (lazy plans).

    `dt` is a date or a column (the date of each row's file); events of tables `tables` leaves out are
    counted as filtered.
    """
    codec = get_codec(format_id)
    resolved = codec.resolve_options(dict(options or {}))
    decoded = lines.frame.mapInArrow(
        _decode_batches(format_id, topic, resolved, envelope, lines.numbering), DECODED_SCHEMA
    )
    if codec.split_update:
        decoded = pair_split_updates(decoded, codec.update_has_before)
    return decoded_extract(decoded, format_id, topic=topic, dt=dt, read=lines.read, tables=tables)


def filtered_out(tables: TableFilter | None) -> Column:
    """True for a decoded event of a table `tables` leaves out; never for rejects or table-less events."""
    if tables is None:
        return F.lit(False)
    name = F.concat_ws(".", "db", "table_name")  # concat_ws skips a null db
    left_out = F.lit(False)
    if tables.include_regex:
        left_out = ~name.rlike(tables.include_regex)
    if tables.exclude_regex:
        left_out = left_out | name.rlike(tables.exclude_regex)
    return F.col("reject_reason").isNull() & F.col("table_name").isNotNull() & left_out


def decoded_extract(
    decoded: DataFrame,
    format_id: str,
    *,
    topic: str,
    dt: str | Column,
    read: dict[str, int],
    tables: TableFilter | None = None,
) -> DecodedExtract:
    """The events and rejects of `decoded` (DECODED_SCHEMA rows of one extract) with their partition
    columns and `filtered` (left out by `tables`); `read` is the messages each file holds."""
    combined = decoded.select(
        "*", F.lit(format_id).alias("source_format"), F.lit(topic).alias("source_topic"), F.lit(dt).alias("dt"),
        filtered_out(tables).alias("filtered"),
    )  # fmt: skip
    events = combined.where(F.col("reject_reason").isNull() & ~F.col("filtered")).select(*CANONICAL_COLUMNS)
    rejects = combined.where(F.col("reject_reason").isNotNull()).select(
        "source_format", "source_topic", "source_file", "source_line", "raw", "raw_encoding",
        F.col("reject_reason").alias("reason"), "dt",
    )  # fmt: skip
    day = dt if isinstance(dt, str) else None
    return DecodedExtract(
        events=events, rejects=rejects, combined=combined, topic=topic, dt=day, read=read, format_id=format_id
    )


def decode_files(
    spark: SparkSession,
    format_id: str,
    inputs: Iterable[str | Path],
    *,
    topic: str,
    dt: str | Column,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> DecodedExtract:
    """Decode the files or folders `inputs` (one message per line, compressed or not).

    With an `envelope` (e.g. `kcat`), each line wraps the message; see `extracts.rows`. A damaged
    `.gz` input gives its readable lines plus one reject instead of failing the run.
    """
    codec = get_codec(format_id)
    codec.resolve_options(dict(options or {}))
    check_envelope(envelope)
    lines = read_extract_lines(spark, list_input_files(inputs), codec, envelope)
    return decode_lines(spark, lines, format_id, topic=topic, dt=dt, options=options, envelope=envelope, tables=tables)


_DECODED_COUNTS = MESSAGE_COUNTS[1:]  # all but read, which Spark counted before decoding


def _counts(where: Column, suffix: str = "") -> list[Column]:
    """Aggregates of decoded / rejected / filtered / events over the combined rows `where` holds."""
    ok, first, kept = F.col("reject_reason").isNull(), F.col("row_index") == 0, ~F.col("filtered")
    return [
        F.coalesce(F.sum(F.when(where & ok & first & kept, F.col("messages"))), F.lit(0)).alias(f"decoded{suffix}"),
        F.count(F.when(where & ~ok & first, 1)).alias(f"rejected{suffix}"),
        F.coalesce(F.sum(F.when(where & ok & first & ~kept, F.col("messages"))), F.lit(0)).alias(f"filtered{suffix}"),
        F.count(F.when(where & ok & kept, 1)).alias(f"events{suffix}"),
    ]


def check_conservation(counts: dict[str, int], where: str = "") -> dict[str, int]:
    if counts["read"] != counts["decoded"] + counts["rejected"] + counts["filtered"]:
        raise ConservationError(f"messages read != decoded + rejected + filtered{where}: {counts}")
    return counts


def count_extract(decoded: DecodedExtract) -> dict[str, int]:
    """The counts (MESSAGE_COUNTS) of a decoded extract (a Spark job of its own), checked for
    conservation. `write_decoded` counts while it writes instead."""
    row = decoded.combined.agg(*_counts(F.lit(True))).first()
    counts = {"read": sum(decoded.read.values()), **{k: int(row[k]) for k in _DECODED_COUNTS}}
    return check_conservation(counts)


def write_decoded(decoded: DecodedExtract, out: str | Path) -> dict[str, int]:
    """Write `out/changes` and `out/rejects` (Delta tables by dt/source_topic); the run's counts, checked.

    The extract's partition is replaced in both tables even where this run has no rows for it, so a
    rerun leaves no stale events or rejects behind.
    """
    by_day = write_decoded_by_day(decoded, out)
    return {k: sum(c[k] for c in by_day.values()) for k in MESSAGE_COUNTS}


def write_decoded_by_day(
    decoded: DecodedExtract, out: str | Path, day_of_file: Callable[[str], str] | None = None
) -> dict[str, dict[str, int]]:
    """`write_decoded` of an extract whose rows carry their day (`dt` a column: `day_of_file` names each
    file's day); counts per day, each day checked for conservation before anything is committed.

    The codecs run once: the decoded rows are kept on disk while one job counts them (which decodes)
    and one looks for redelivered messages (`duplicates`), then the events and the rejects are each
    replaced in one Delta commit from those rows.
    """
    read: dict[str, int] = {} if decoded.dt is None else {decoded.dt: 0}
    for file, count in decoded.read.items():
        day = decoded.dt or day_of_file(file)
        read[day] = read.get(day, 0) + count
    days = sorted(read)
    # each day's partition is replaced even where it gets no rows, so a rerun leaves nothing stale
    replace = [{"dt": day, "source_topic": decoded.topic} for day in days]
    combined = decoded.combined
    with persisted(combined):
        by_day = [c for i, day in enumerate(days) for c in _counts(F.col("dt") == day, f"_{i}")]
        metrics = combined.agg(*by_day or [F.count("*")]).first().asDict()
        counts = {}
        for i, day in enumerate(days):
            day_counts = {"read": read[day], **{k: int(metrics[f"{k}_{i}"]) for k in _DECODED_COUNTS}}
            counts[day] = check_conservation(day_counts, f" on {day}")
        kept = combined.where(F.col("reject_reason").isNull() & ~F.col("filtered"))
        kept = kept.select(*CANONICAL_COLUMNS, "row_index")
        repeats = find_duplicates(kept, get_codec(decoded.format_id).delivery_fields)
        events = decoded.events if repeats is None else mark_duplicates(decoded.events, repeats)
        for frame, name, schema in ((events, CHANGES_DIR, CANONICAL_SCHEMA),
                                    (decoded.rejects, REJECTS_DIR, REJECTS_SCHEMA)):  # fmt: skip
            properties = {"delta.dataSkippingStatsColumns": STATS_COLUMNS[name]}
            io.replace_partitions(frame, join(out, name), replace, schema=schema, register_as=name,
                                  properties=properties)  # fmt: skip
    return counts


@contextmanager
def persisted(*frames: DataFrame) -> Iterator[None]:
    """Keep `frames` on local disk while the block reads them more than once, then drop them.

    On disk, not in memory: a day's decoded rows outgrow the heap, and a block spilled from memory is
    read back into it whenever the memory store's accounting says it fits, which the heap's other
    tenants (Arrow batches, Parquet writers) do not enter: 1,000,000 canal messages failed a 700 MB
    heap so. Read back from the OS's page cache, the disk costs little.
    """
    for frame in frames:
        frame.persist(StorageLevel.DISK_ONLY)
    try:
        yield
    finally:
        for frame in frames:
            frame.unpersist()
