"""Read -> decode -> write: the one chain the CLI and the Dagster assets both call."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from cdc_pipelines import canonical as C
from cdc_pipelines import envelope as kafka_envelope
from cdc_pipelines import io
from cdc_pipelines.damaged_gzip import check_gzip_inputs
from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.base import IS_MESSAGE, MESSAGES, RAW_ENCODING, ROW_INDEX, finish, parse_json_lines
from cdc_pipelines.formats.split_update import pair_split_updates

T = TypeVar("T")
CHANGES_DIR = "changes"
REJECTS_DIR = "rejects"


class ConservationError(RuntimeError):
    """Messages read != decoded + rejected: something was lost or counted twice."""


@dataclass
class DecodedExtract:
    """Canonical events and rejects of one extract, not yet written (lazy Spark plans)."""

    events: DataFrame
    rejects: DataFrame
    lines: DataFrame
    combined: DataFrame
    partitions: tuple[dict[str, str], ...] = ()
    # plans read more than once on the way to `combined` and the counts, costly to compute again
    # (lines that come out of Python, rows that split-update pairing reads in two branches)
    reused: tuple[DataFrame, ...] = ()


def decode_lines(
    lines: DataFrame,
    format_id: str,
    *,
    topic: str,
    dt: str | Column,
    options: Mapping[str, str] | None = None,
    lineage: DataFrame | None = None,
) -> DecodedExtract:
    """Decode lines (`value`, `source_file`, `source_line`) into canonical events and rejects."""
    codec = get_codec(format_id)
    staged = (codec.parse or parse_json_lines)(lines, codec.schema)
    return decode_staged(staged, format_id, topic=topic, dt=dt, options=options, lineage=lineage)


def decode_staged(
    staged: DataFrame,
    format_id: str,
    *,
    topic: str,
    dt: str | Column,
    options: Mapping[str, str] | None = None,
    lineage: DataFrame | None = None,
) -> DecodedExtract:
    """Decode parsed messages (`msg`, `pre_reject`, `is_message`, lineage) into events and rejects.

    `dt` is a date or a column (the date of each row's file); `lineage` is an envelope's per-line
    lineage (see `envelope.unwrap`), joined back onto the decoded rows.
    """
    codec = get_codec(format_id)
    resolved = codec.resolve_options(dict(options or {}))
    messages = staged.where(F.col(IS_MESSAGE)).drop(IS_MESSAGE)
    decoded = codec.decode(messages, resolved)
    reused: tuple[DataFrame, ...] = ()
    if codec.split_update:
        reused = (decoded,)
        decoded = pair_split_updates(decoded)
    decoded = finish(decoded, codec, resolved)
    if codec.multi_row:
        # a message is rejected whole: one bad row rejects its siblings too, and gives one reject
        message = Window.partitionBy("source_file", "source_line")
        decoded = decoded.withColumn("reject_reason", F.min("reject_reason").over(message)).where(
            F.col("reject_reason").isNull() | (F.col(ROW_INDEX) == 0)
        )
    combined = decoded.select(
        "*",
        F.lit(format_id).alias("source_format"),
        F.lit(topic).alias("source_topic"),
        F.lit(dt).alias("dt"),
    )
    if lineage is not None:
        combined = kafka_envelope.attach_lineage(combined, lineage, ROW_INDEX)
    events = combined.where(F.col("reject_reason").isNull()).select(
        C.event_id(
            F.col("source_format"), F.col("source_topic"), F.col("source_file"), F.col("source_line"), F.col(ROW_INDEX)
        ).alias("event_id"),
        *[c for c in C.CANONICAL_COLUMNS if c != "event_id"],
    )
    rejects = combined.where(F.col("reject_reason").isNotNull()).select(
        "source_format",
        "source_topic",
        "source_file",
        "source_line",
        F.col("value").alias("raw"),
        F.col(RAW_ENCODING),
        F.col("reject_reason").alias("reason"),
        "dt",
    )
    # one day's partition is replaced even where it gets no rows; a range (`dt` a column) replaces the days it has
    partitions = ({"dt": dt, "source_topic": topic},) if isinstance(dt, str) else ()
    return DecodedExtract(
        events=events, rejects=rejects, lines=messages, combined=combined, partitions=partitions, reused=reused
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
) -> DecodedExtract:
    """Decode the files or folders `inputs` (one message per line, compressed or not).

    With an `envelope` (e.g. `kcat`), each line wraps the message; see `cdc_pipelines.envelope`. A
    damaged `.gz` input gives its readable lines plus one reject instead of failing the run.
    """
    codec = get_codec(format_id)
    files = io.list_input_files(inputs)
    damage = check_gzip_inputs(files)
    files = damage.readable_files(files)
    lineage = None
    if envelope is not None:
        if codec.read is not None:
            raise kafka_envelope.EnvelopeError(f"format {format_id} reads its own files and takes no envelope")
        unwrapped = kafka_envelope.unwrap(io.read_lines(spark, files), envelope)
        staged = (codec.parse or parse_json_lines)(unwrapped.lines, codec.schema)
        lineage = unwrapped.lineage
    elif codec.read is not None:
        staged = codec.read(spark, files)
    else:
        staged = (codec.parse or parse_json_lines)(io.read_lines(spark, files), codec.schema)
    staged = damage.restore(spark, staged)
    decoded = decode_staged(staged, format_id, topic=topic, dt=dt, options=options, lineage=lineage)
    return replace(decoded, reused=(decoded.lines, *decoded.reused)) if codec.read is not None else decoded


def count_extract(decoded: DecodedExtract) -> dict[str, int]:
    """read / decoded / rejected / events of a decoded extract, checked for conservation."""
    ok, first = F.col("reject_reason").isNull(), F.col(ROW_INDEX) == 0
    row = decoded.combined.agg(
        F.coalesce(F.sum(F.when(ok & first, F.col(MESSAGES))), F.lit(0)).alias("decoded"),
        F.count(F.when(~ok & first, 1)).alias("rejected"),
        F.count(F.when(ok, 1)).alias("events"),
    ).first()
    counts = {
        "read": decoded.lines.count(),
        "decoded": row["decoded"],
        "rejected": row["rejected"],
        "events": row["events"],
    }
    if counts["read"] != counts["decoded"] + counts["rejected"]:
        raise ConservationError(f"messages read != decoded + rejected: {counts}")
    return counts


def write_decoded(decoded: DecodedExtract, out: str | Path, count: Callable[[DecodedExtract], T] = count_extract) -> T:
    """Write `out/changes` and `out/rejects` (Parquet by dt/source_topic) and return `count(decoded)`.

    The extract's partition is replaced in both tables even where this run has no rows for it, so a
    rerun leaves no stale events or rejects behind.
    """
    out = Path(out)
    with persisted(*decoded.reused, decoded.combined):
        io.write_partitioned(decoded.events, out / CHANGES_DIR, replace=decoded.partitions)
        io.write_partitioned(decoded.rejects, out / REJECTS_DIR, replace=decoded.partitions)
        return count(decoded)


@contextmanager
def persisted(*frames: DataFrame) -> Iterator[None]:
    """Keep `frames` on disk while the block reads them more than once, then drop them."""
    for frame in frames:
        frame.persist(StorageLevel.DISK_ONLY)
    try:
        yield
    finally:
        for frame in frames:
            frame.unpersist()
