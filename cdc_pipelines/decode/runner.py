"""Read -> decode -> write on Spark: the one chain the CLI and the Dagster assets both call.

Spark reads the lines (or DTS Avro containers) and hands them to the Python codecs in Arrow
batches (`mapInArrow`): each line becomes its events or one reject (`decode.rows.decoded_rows`).
Spark then does what needs the whole dataset: split-update halves are brought together by key (one
shuffle of every decoded row, halves sorted first, then `messages.pair_halves` over each key's halves
in input order), and the partitioned, atomic writes. The decode makes one pass over its rows: the
counts are observed in the write, the delivery hashes and rejects reported beside it (`pass_results`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import itemgetter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Accumulator
from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines.decode.delivery import DeliveryIdentity, mark_redeliveries
from cdc_pipelines.decode.messages import EVENT_FIELDS, ROW_COUNTS, is_half, pair_halves
from cdc_pipelines.decode.pass_results import ID_PREFIX, PassResults, TaskReports, hash_array
from cdc_pipelines.decode.redeliveries import BROADCAST_ROWS, mark_duplicates
from cdc_pipelines.decode.rows import decoded_rows
from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.extract.lines import ExtractLines, LineNumbering, read_extract_lines
from cdc_pipelines.extract.messages import check_envelope
from cdc_pipelines.formats import ResolvedCodec, resolve_codec
from cdc_pipelines.formats.base import Codec, max_message_chars
from cdc_pipelines.lake import io
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR
from cdc_pipelines.lake.partition_paths import dt_of_path
from cdc_pipelines.model.canonical import MESSAGE_COUNTS, PARTITION_COLUMNS
from cdc_pipelines.model.meta_keys import DUPLICATE_OF, row_index
from cdc_pipelines.model.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.model.table_filter import TableFilter
from cdc_pipelines.runtime.arrow_maps import batch_rows, map_array
from cdc_pipelines.runtime.progress import message_counter
from cdc_pipelines.runtime.python_workers import fail_first_attempt, failure_injected, no_cycle_collection
from cdc_pipelines.runtime.storage import join

# Delta keeps min/max statistics (for skipping files in queries) of these columns only: by default it
# takes the first 32, and computing them for the long ids and paths cost 40% of writing the changes
STATS_COLUMNS = {CHANGES_DIR: "op,db,table_name,event_time,sync_time,source_line", REJECTS_DIR: "source_line"}
# the Delta properties `changes` and `rejects` are created with. No deletion vectors: delta-rs's Arrow
# reader (`DeltaTable.to_pyarrow_table`, what most Python users call) refuses tables that have them
TABLE_PROPERTIES = {name: {"delta.dataSkippingStatsColumns": columns} for name, columns in STATS_COLUMNS.items()}
_TEXT = T.StringType()
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


def _flags() -> tuple[Column, Column, Column]:
    """(decoded, the first row of its message, kept by the table filter) of a combined row."""
    return F.col("reject_reason").isNull(), F.col("row_index") == 0, ~F.col("filtered")


class ConservationError(RuntimeError):
    """Messages read != decoded + rejected + filtered: something was lost or counted twice."""


@dataclass
class DecodedExtract:
    """The decoded rows of one extract (`combined`: events and rejects with their partition columns and
    `filtered`), not yet written (lazy Spark plans).

    `read` is the number of messages each input file holds (counted by Spark before decoding), the
    left side of the conservation check; `results` what the pass reports beside its rows.
    """

    combined: DataFrame
    format_id: str
    topic: str
    dt: str | None = None
    read: dict[str, int] = field(default_factory=dict)
    results: PassResults | None = None
    delivery_fields: tuple[str, ...] = ()

    @property
    def rejects(self) -> DataFrame:
        return self.combined.where(F.col("reject_reason").isNotNull()).select(
            "source_format", "source_topic", "source_file", "source_line", "raw", "raw_encoding",
            F.col("reject_reason").alias("reason"), "dt",
        )  # fmt: skip


def rows_to_batch(
    rows: list[dict], schema: pa.Schema = _ARROW_SCHEMA, constants: Mapping[str, object] | None = None
) -> pa.RecordBatch:
    """Rows (dicts holding every column of `schema` but `constants`, DECODED_SCHEMA's by default; times as
    epoch micros) -> one Arrow batch, column by column; `constants` are columns of one value."""
    if not rows:
        return pa.RecordBatch.from_pylist([], schema=schema)
    constants = constants or {}
    columns = []
    for f in schema:  # a column at a time: transposing the rows with zip(*rows) cost 3.6 us a row more
        if f.name in constants:
            columns.append(pa.repeat(pa.scalar(constants[f.name], f.type), len(rows)))
            continue
        values = list(map(itemgetter(f.name), rows))
        columns.append(map_array(values) if pa.types.is_map(f.type) else pa.array(values, f.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _reports(rows: list[dict], identity: DeliveryIdentity, paired: bool = False) -> tuple[np.ndarray, list[tuple]]:
    """The delivery hashes of `rows`' finished events (split-update halves only once `paired`: before,
    they are hashed as their pair) and the rejects as `PassResults` rows."""
    events, rejects = [], []
    for row in rows:
        if row["reject_reason"] is not None:
            rejects.append(
                (row["source_file"], row["source_line"], row["raw"], row["raw_encoding"], row["reject_reason"])
            )
        elif paired or not is_half(row):
            events.append(row)
    return hash_array(events, identity), rejects


def _decode_batches(
    codec: ResolvedCodec,
    topic: str,
    envelope: str | None,
    numbering: LineNumbering,
    results: PassResults | None = None,
    counter: Accumulator | None = None,
):
    """The `mapInArrow` function over extract lines: events and rejects of each batch of lines, their
    delivery hashes and rejects reported to `results` (when the pass is the one that writes).

    The message size limit and the failure to inject are read here, on the driver: a Python worker's
    environment is its own. The codec travels by its id and options (its functions are the module's).
    """
    limit = max_message_chars()
    identity = DeliveryIdentity(codec.codec.delivery_fields)
    fail = failure_injected()
    format_id, options = codec.format_id, dict(codec.options)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        lines = numbering.lines()
        reports = TaskReports(results)
        for n, batch in enumerate(batches):
            if counter is not None:
                counter.add(batch.num_rows)
            with no_cycle_collection():
                rows = list(decoded_rows(format_id, topic, lines(batch), options, envelope, limit))
                reports.add(*_reports(rows, identity))
                decoded = rows_to_batch(rows)
            if fail and n == 1:
                fail_first_attempt()
            yield decoded

    return run


def _pair_batches(update_has_before: bool, identity: DeliveryIdentity, results: PassResults | None):
    """The `mapInArrow` function over a partition sorted halves first (by key and input order): the
    halves are paired in Python (and the pairs reported to `results`), every other row passes through
    as Arrow, never turned into dicts."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rest: list[pa.RecordBatch] = []
        reports = TaskReports(results)

        def halves() -> Iterator[dict]:
            for batch in batches:
                mask = pc.and_(pc.is_valid(batch.column("pair_key")), pc.is_null(batch.column("reject_reason")))
                yield from batch_rows(batch.filter(mask))
                others = batch.filter(pc.invert(mask))
                if others.num_rows:  # halves sort first: no later batch of this partition holds one
                    rest.append(others)
                    return

        with no_cycle_collection():
            paired = pair_halves(halves(), update_has_before)
            while out := list(islice(paired, 4096)):
                reports.add(*_reports(out, identity, paired=True))
                yield rows_to_batch(out)
        yield from rest
        yield from batches

    return run


def pair_split_updates(decoded: DataFrame, codec: Codec, results: PassResults | None = None) -> DataFrame:
    """Fold each split update's before half into its after half, wherever the halves sit.

    One shuffle of every row, so the codecs run once (a branch for the halves and one for the rest
    would each run them): halves by pair key, sorted first and by input order within a key; other
    rows spread by their lineage, passed through untouched.
    """
    half = F.col("pair_key").isNotNull() & F.col("reject_reason").isNull()  # `messages.is_half`, as a column
    lineage = F.xxhash64("source_file", "source_line", "row_index").cast("string")
    spread = F.when(half, F.col("pair_key")).otherwise(lineage)
    identity = DeliveryIdentity(codec.delivery_fields)
    return (
        decoded.repartition(spread)
        .sortWithinPartitions(half.desc(), "pair_key", "source_file", "source_line")
        .mapInArrow(_pair_batches(codec.update_has_before, identity, results), DECODED_SCHEMA)
    )


def decode_lines(
    lines: ExtractLines,
    codec: ResolvedCodec,
    *,
    topic: str,
    dt: str | Column,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> DecodedExtract:
    """Decode extract lines into canonical events and rejects (lazy plans, run once by `write_decoded`).

    `dt` is a date or a column (the date of each row's file); events of tables `tables` leaves out are
    counted as filtered.
    """
    spark = lines.frame.sparkSession
    results = PassResults.create(spark.sparkContext)
    decoded = lines.frame.mapInArrow(
        _decode_batches(codec, topic, envelope, lines.numbering, results, message_counter()),
        DECODED_SCHEMA,
    )
    if codec.codec.split_update:
        decoded = pair_split_updates(decoded, codec.codec, results)
    return decoded_extract(
        decoded, codec.format_id, topic=topic, dt=dt, read=lines.read, tables=tables, results=results,
        delivery_fields=codec.codec.delivery_fields,
    )  # fmt: skip


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
    results: PassResults | None = None,
    delivery_fields: tuple[str, ...] = (),
) -> DecodedExtract:
    """The events and rejects of `decoded` (DECODED_SCHEMA rows of one extract) with their partition
    columns and `filtered` (left out by `tables`); `read` is the messages each file holds.

    `results` are what the pass that made `decoded` reports: without, the write looks for no
    redeliveries and decodes again for its rejects."""
    combined = decoded.select(
        "*", F.lit(format_id).alias("source_format"), F.lit(topic).alias("source_topic"), F.lit(dt).alias("dt"),
        filtered_out(tables).alias("filtered"),
    )  # fmt: skip
    day = dt if isinstance(dt, str) else None
    return DecodedExtract(
        combined=combined, topic=topic, dt=day, read=read, format_id=format_id, results=results,
        delivery_fields=delivery_fields,
    )  # fmt: skip


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

    With an `envelope` (e.g. `kcat`), each line wraps the message; see `decode.rows`. A damaged
    `.gz` input gives its readable lines plus one reject instead of failing the run.
    """
    codec = resolve_codec(format_id, options)
    check_envelope(envelope)
    codec.codec.check_ready(codec.options)
    lines = read_extract_lines(spark, list_input_files(inputs), codec.codec, envelope)
    return decode_lines(lines, codec, topic=topic, dt=dt, envelope=envelope, tables=tables)


_DECODED_COUNTS = tuple(c.name for c in ROW_COUNTS)  # all but read, which Spark counted before decoding


def _counts(where: Column, suffix: str = "") -> list[Column]:
    """`messages.ROW_COUNTS` aggregated over the combined rows `where` holds."""
    out = []
    for count in ROW_COUNTS:
        holds = where
        for flag, want in zip(_flags(), (count.decoded, count.first, count.kept), strict=True):
            holds = holds if want is None else holds & (flag if want else ~flag)
        value = F.lit(1) if count.value is None else F.col(count.value)
        out.append(F.coalesce(F.sum(F.when(holds, value)), F.lit(0)).alias(f"{count.name}{suffix}"))
    return out


def check_message_counts(counts: dict[str, int], where: str = "") -> dict[str, int]:
    """`counts` when every message read is decoded, rejected or filtered; ConservationError otherwise."""
    if counts["read"] != counts["decoded"] + counts["rejected"] + counts["filtered"]:
        raise ConservationError(f"messages read != decoded + rejected + filtered{where}: {counts}")
    return counts


class CountedPass:
    """The events of a decoded extract with its counts observed as they pass (`DataFrame.observe`):
    whatever action consumes `events` (the lake's write, an encode) decodes once and counts while it does.

    Observed metrics are aggregated in the stage that runs the action, from each task once it succeeds,
    so a retried task is counted once. `counts()` is exact after that action has run.
    """

    def __init__(self, decoded: DecodedExtract):
        self.decoded = decoded
        self.read: dict[str, int] = {} if decoded.dt is None else {decoded.dt: 0}
        for file, count in decoded.read.items():
            day = decoded.dt or dt_of_path(file)
            self.read[day] = self.read.get(day, 0) + count
        self.days = sorted(self.read)
        self.observation = Observation()
        by_day = [c for i, day in enumerate(self.days) for c in _counts(F.col("dt") == day, f"_{i}")]
        ok, _, kept = _flags()
        reject_rows = F.count(F.when(~ok, 1)).alias("reject_rows")
        observed = decoded.combined.observe(self.observation, *by_day, reject_rows)
        self.events = observed.where(ok & kept).select(*CANONICAL_COLUMNS)

    def metrics(self) -> dict[str, int]:
        return self.observation.get

    def counts(self) -> dict[str, dict[str, int]]:
        """Each day's counts, checked for conservation."""
        metrics = self.metrics()
        out = {}
        for i, day in enumerate(self.days):
            day_counts = {"read": self.read[day], **{k: int(metrics[f"{k}_{i}"]) for k in _DECODED_COUNTS}}
            out[day] = check_message_counts(day_counts, f" on {day}")
        return out


def write_decoded(decoded: DecodedExtract, out: str | Path) -> dict[str, int]:
    """Write `out/changes` and `out/rejects` (Delta tables by dt/source_topic); the run's counts, checked.

    The extract's partition is replaced in both tables even where this run has no rows for it, so a
    rerun leaves no stale events or rejects behind.
    """
    by_day = write_decoded_by_day(decoded, out)
    return {k: sum(c[k] for c in by_day.values()) for k in MESSAGE_COUNTS}


def write_decoded_by_day(decoded: DecodedExtract, out: str | Path) -> dict[str, dict[str, int]]:
    """`write_decoded` of an extract whose rows carry their day (`dt` a column: each file's is named by its
    folder, `partition_paths.dt_of_path`); counts per day, each checked for conservation.

    One pass: the events are decoded, counted and written in the one job of their Delta commit. Its
    tasks report their delivery hashes and their rejects on the side (`PassResults`): where no hash
    repeats, no event is read again; the rejects are committed from what the tasks sent, and decoded
    again (the rejects alone) only where a task had more than it sends. A conservation failure is raised
    after the events' commit and before the rejects' (the rerun that fixes the cause replaces both).
    """
    passed = CountedPass(decoded)
    replace = [{"dt": day, "source_topic": decoded.topic} for day in passed.days]
    spark = decoded.combined.sparkSession
    changes = join(out, CHANGES_DIR)
    commit = _replace(passed.events, changes, replace, CHANGES_DIR, CANONICAL_SCHEMA)
    counts = passed.counts()
    candidates = decoded.results.candidates() if decoded.results is not None else []
    if candidates:
        _mark_redeliveries(spark, commit, replace, decoded.delivery_fields, candidates)
    rejects = _reject_rows(decoded, passed.metrics()["reject_rows"])
    path = join(out, REJECTS_DIR)
    if rejects is None:
        _replace(decoded.rejects, path, replace, REJECTS_DIR, REJECTS_SCHEMA)
    else:
        io.replace_rows(spark, rejects, path, replace, REJECTS_SCHEMA, REJECTS_DIR, TABLE_PROPERTIES[REJECTS_DIR])
    return counts


def _replace(frame: DataFrame, path: str, replace: list[dict], name: str, schema: T.StructType) -> io.Commit:
    properties = TABLE_PROPERTIES[name]
    return io.replace_partitions(frame, path, replace, schema=schema, register_as=name, properties=properties)


def _reject_rows(decoded: DecodedExtract, observed: int) -> list[tuple] | None:
    """The rejects of the pass as REJECTS_SCHEMA rows: none, or those its tasks sent; None where a task sent
    only part of its own, or the pass sent none (the replay): the extract is then decoded again for its
    rejects alone (`DecodedExtract.rejects`)."""
    rows = [] if observed == 0 else (decoded.results.reject_rows() if decoded.results is not None else None)
    if rows is None or len(rows) != observed:
        return None
    fixed = (decoded.format_id, decoded.topic)
    return [(*fixed, file, line, raw, encoding, reason, decoded.dt or dt_of_path(file))
            for file, line, raw, encoding, reason in rows]  # fmt: skip


def _mark_redeliveries(
    spark: SparkSession, commit: io.Commit, replace: list[dict], delivery_fields, candidates: list[str]
) -> None:
    """Where delivery hashes repeated: the committed events among `candidates` (event id prefixes)
    compared exactly, and the repeats marked in place (a MERGE: a second commit, only on such days)."""
    within = io.partition_predicate(replace, PARTITION_COLUMNS)
    prefixes = spark.createDataFrame([(c,) for c in candidates], "prefix string")
    if len(candidates) <= BROADCAST_ROWS:
        prefixes = F.broadcast(prefixes)
    written = io.read_canonical(spark, commit.path, commit.version).where(F.expr(within))
    rows = written.join(prefixes, F.substring("event_id", 1, ID_PREFIX) == F.col("prefix"), "left_semi")
    lineage = ("event_id", "source_topic", "dt", "source_file", "source_line")
    repeats = redeliveries_of(rows.select(*lineage, *EVENT_FIELDS), delivery_fields)
    repeats = repeats.localCheckpoint()  # counted, then joined: the events are compared once
    if not repeats.isEmpty():
        mark_duplicates(spark, commit.path, repeats, within)


_HASHED = T.StructField("_hash", T.LongType())


def redeliveries_of(rows: DataFrame, delivery_fields: Sequence[str]) -> DataFrame:
    """(event_id, duplicate_of) of the events among `rows` (the event id, its topic, day and lineage, and
    `EVENT_FIELDS`) repeating an earlier one of their topic and day: the rows brought together by their
    delivery hash (`DeliveryIdentity.hash`, in `mapInArrow`), then each task's compared exactly by
    `delivery.mark_redeliveries`, the local decode's comparison, a topic and day at a time."""
    fields = tuple(delivery_fields)

    def hashed(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        identity = DeliveryIdentity(fields)
        for batch in batches:
            values = [identity.hash(r | {"row_index": row_index(r)}) for r in batch_rows(batch)]
            signed = [v - (1 << 64) if v >= 1 << 63 else v for v in values]  # Spark's long is signed
            yield batch.append_column("_hash", pa.array(signed, pa.int64()))

    def marked(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with no_cycle_collection():
            events = [r for batch in batches for r in batch_rows(batch)]
            by_day: dict[tuple, list[dict]] = {}
            for event in events:
                by_day.setdefault((event["source_topic"], event["dt"]), []).append(event)
            for day in by_day.values():
                mark_redeliveries(day, fields)
        pairs = [(e["event_id"], e["meta"][DUPLICATE_OF]) for e in events if DUPLICATE_OF in (e["meta"] or {})]
        yield pa.RecordBatch.from_arrays([pa.array([p[i] for p in pairs], pa.string()) for i in (0, 1)],
                                         names=["event_id", "duplicate_of"])  # fmt: skip

    grouped = rows.mapInArrow(hashed, T.StructType([*rows.schema.fields, _HASHED])).repartition("_hash")
    return grouped.mapInArrow(marked, "event_id string, duplicate_of string")
