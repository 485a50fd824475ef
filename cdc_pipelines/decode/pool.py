"""A local extract (or a Kafka day's lines) decoded by this process or a pool of processes, committed by
delta-rs: the local engine's one decode, no JVM.

Why not Spark here: a Spark session's start and Delta's first jobs cost 15-20 s however few lines a day
holds, and on one machine Spark's decode spends, beside the codecs, about half as much CPU again in the JVM
(reading the lines, the Arrow crossing both ways, Parquet's writer: 32-35 of 96 CPU-s for 2,000,000 canal
messages, docs/benchmarks-history.md, *the decode's tail work*). Here each process reads its sources (a byte
range of a file of plain lines; a whole compressed, Avro-container or CSV file through `file_lines`; or
lines already read, a Kafka day's), runs the per-line functions the Spark tasks run (`rows.decoded_rows`),
leaves out the tables the filter drops, and writes its events to Parquet with pyarrow. Split-update halves
are left in files by bucket of their pair key, and each bucket paired by one process
(`messages.pair_halves`): the shuffle Spark does, on local disk. The parent compares exactly only the events
whose delivery hashes repeat (`delivery.mark_redeliveries`), and commits every file in one Delta transaction
(delta-rs's `create_write_transaction`, which replaces the day's partition as Spark's replaceWhere does). The
processes write their rejects to files of `rejects` too, which the parent commits once the counts are
checked, then the run counts. A run that fails before a commit leaves that table's new files outside its
log (VACUUM removes them). A day of at most `MAX_BYTES_SETTING` is one process's: this one, no process
started. Files are home-made Parquet only because delta-rs's writer takes one stream: the processes would
otherwise hand every row to one writer.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import tempfile
import time
import uuid
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from cdc_pipelines.decode.delivery import DeliveryIdentity, mark_redeliveries
from cdc_pipelines.decode.messages import decoded_counts, is_half, pair_halves_in_memory
from cdc_pipelines.decode.pass_results import ID_PREFIX, candidate_prefixes, hash_array
from cdc_pipelines.decode.rows import decoded_rows
from cdc_pipelines.decode.runner import (
    STATS_COLUMNS,
    TABLE_PROPERTIES,
    check_message_counts,
    rows_to_batch,
)
from cdc_pipelines.extract.damaged_gzip import check_gzip_inputs
from cdc_pipelines.extract.files import COMPRESSED, has_csv_header, is_avro_container, list_input_files
from cdc_pipelines.extract.messages import Line, container_lines
from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.base import max_message_chars
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR
from cdc_pipelines.lake.partition_paths import partition_dir
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.model.canonical import MESSAGE_COUNTS, PARTITION_COLUMNS
from cdc_pipelines.model.meta_keys import DUPLICATE_OF
from cdc_pipelines.model.schema import CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.model.table_filter import TableFilter
from cdc_pipelines.runtime.arrow_maps import batch_rows, map_array, map_dicts
from cdc_pipelines.runtime.inputs import spark_file_uri
from cdc_pipelines.runtime.processes import process_map
from cdc_pipelines.runtime.processes import processes as runtime_processes
from cdc_pipelines.runtime.python_workers import no_cycle_collection
from cdc_pipelines.runtime.settings import whole_number
from cdc_pipelines.runtime.storage import local_path

# the setting (`--conf` or CDC_SPARK_CONF) of the largest extract decoded in this process; 0 turns it off.
# 8 MiB is about 18,000 canal messages, 1-2 s of one core: starting the processes costs about a second
MAX_BYTES_SETTING = "cdc.decode.in_process_max_bytes"
DEFAULT_MAX_BYTES = 8 << 20
# the setting of the processes a larger local extract is decoded by; 0 sends it to Spark. Default: the cores
# this process may run on
PROCESSES_SETTING = "cdc.decode.processes"
# lines decoded, and events written, per batch; bytes read from the file at a time
BATCH_LINES = 8192
READ_BYTES = 16 << 20
# each process's share of the input is cut in ranges of about this size (at least one per process)
RANGE_BYTES = 256 << 20
# the statistics Delta keeps per file: min/max of the strings and longs among STATS_COLUMNS, whose
# text needs no convention (timestamps' is Delta's own JSON form: left out, so no reader skips on it)
_NULL_COUNTED = {name: columns.split(",") for name, columns in STATS_COLUMNS.items()}
_STATS = {name: [c for c in columns if c not in ("event_time", "sync_time")] for name, columns in _NULL_COUNTED.items()}
_SCHEMAS = {CHANGES_DIR: CANONICAL_SCHEMA, REJECTS_DIR: REJECTS_SCHEMA}


def processes(conf: Mapping[str, str], files: Sequence[str] = ()) -> int:
    """The processes that decode local `files`: one (this process) for at most `MAX_BYTES_SETTING` of them,
    else the setting's, else the cores this process may use; 0: Spark's. No `files`: the pool's size (the bench's)."""
    limit = whole_number(conf, MAX_BYTES_SETTING, DEFAULT_MAX_BYTES)
    if files and limit > 0 and sum(os.path.getsize(local_path(f)) for f in files) <= limit:
        return 1
    return runtime_processes(conf, PROCESSES_SETTING)


def splittable(path: str, format_id: str) -> bool:
    """Whether a file is plain lines cut in byte ranges: not compressed, no Avro container, no CSV (those are
    read whole, by one process)."""
    codec = get_codec(format_id)
    return not (path.lower().endswith(COMPRESSED) or is_avro_container(path, codec) or has_csv_header(path, codec))


@dataclass(frozen=True)
class ByteRange:
    """Lines `start`..`end` (bytes; both at a line's start) of one file; `first_line` set once counted."""

    path: str
    start: int
    end: int
    first_line: int = 1


@dataclass(frozen=True)
class WholeFile:
    """A file read whole and numbered by `file_lines` (`.gz`, an Avro container, CSV tuples)."""

    path: str


@dataclass(frozen=True)
class HeldLines:
    """Lines already read, with their lineage (a Kafka day's kcat lines)."""

    lines: Sequence[Line]


Source = ByteRange | WholeFile | HeldLines


def _newline_after(fh, offset: int, size: int) -> int:
    """The offset just past the first `\\n` at or after `offset` (the file's size where none is)."""
    fh.seek(offset)
    while offset < size:
        block = fh.read(1 << 16)
        at = block.find(b"\n")
        if at >= 0:
            return offset + at + 1
        offset += len(block)
    return size


def byte_ranges(files: Sequence[str], workers: int) -> list[ByteRange]:
    """Each file cut after newlines into ranges of about the same size, at least `workers` in all."""
    sizes = {f: os.path.getsize(f) for f in files}
    total = sum(sizes.values()) or 1
    wanted = max(workers, -(-total // RANGE_BYTES // workers) * workers)
    out = []
    for path, size in sizes.items():
        parts = max(1, round(wanted * size / total))
        with open(path, "rb") as fh:
            cuts = sorted({0, size, *(_newline_after(fh, size * i // parts, size) for i in range(1, parts))})
        out += [ByteRange(path, a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
    return out or [ByteRange(f, 0, 0) for f in files[:1]]


def range_blocks(r: ByteRange) -> Iterator[bytes]:
    """The range's bytes in blocks that end after a newline (the last may not)."""
    with open(r.path, "rb") as fh:
        fh.seek(r.start)
        left, rest = r.end - r.start, b""
        while left > 0:
            read = fh.read(min(READ_BYTES, left))
            if not read:  # the file is shorter than when it was cut: what is left of it ends the range
                break
            block = rest + read
            left = r.end - fh.tell()
            cut = block.rfind(b"\n") + 1 if left > 0 else len(block)
            if cut:
                yield block[:cut]
            rest = block[cut:]
        if rest:
            yield rest


def count_lines(r: ByteRange) -> int:
    """The lines of a range as `bytes.splitlines` numbers them (`\\n`, `\\r\\n` and a lone `\\r` end one)."""
    lines = 0
    for block in range_blocks(r):
        lines += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
        if not block.endswith((b"\n", b"\r")):
            lines += 1
    return lines


@dataclass
class RangeResult:
    """What a process sends back for its range: the Parquet files it wrote (events and rejects: the parent
    holds no row, so a day of bad lines does not fill its memory), the halves to pair, its events' delivery
    hashes (with their event id prefixes) and its counts."""

    files: list[dict] = field(default_factory=list)
    reject_files: list[dict] = field(default_factory=list)
    halves: list[dict] = field(default_factory=list)  # while the range runs; then left in `Job.halves`
    hashes: list[np.ndarray] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


class _Files:
    """Parquet files of one partition of `changes` or `rejects` (`name`) under the table folder `root`,
    rolled at `rows` rows, with their Delta statistics."""

    def __init__(self, root: str, relative_dir: str, name: str = CHANGES_DIR, rows: int = 4_000_000):
        self.root, self.dir, self.name, self.rows = root, relative_dir, name, rows
        self.schema = delta_rs.arrow_schema(_SCHEMAS[name])
        self.done: list[dict] = []
        self.writer = None

    def write(self, batch: pa.Table) -> None:
        if self.writer is None:
            name = f"{self.dir}/part-{uuid.uuid4()}.c000.snappy.parquet"
            os.makedirs(os.path.join(self.root, self.dir), exist_ok=True)
            self.writer = pq.ParquetWriter(os.path.join(self.root, name), self.schema, compression="snappy")
            nulls = dict.fromkeys(_NULL_COUNTED[self.name], 0)
            self.current = {"path": name, "rows": 0, "min": {}, "max": {}, "nulls": nulls}
        self.writer.write_table(batch)
        stats = self.current
        stats["rows"] += batch.num_rows
        for name in _NULL_COUNTED[self.name]:
            stats["nulls"][name] += batch.column(name).null_count
        for name in _STATS[self.name]:
            bounds = pc.min_max(batch.column(name))
            if bounds["min"].is_valid:
                low, high = bounds["min"].as_py(), bounds["max"].as_py()
                stats["min"][name] = min(stats["min"].get(name, low), low)
                stats["max"][name] = max(stats["max"].get(name, high), high)
        if stats["rows"] >= self.rows:
            self.close()

    def close(self) -> list[dict]:
        if self.writer is not None:
            self.writer.close()
            self.current["size"] = os.path.getsize(os.path.join(self.root, self.current["path"]))
            self.done.append(self.current)
            self.writer = None
        return self.done


@dataclass(frozen=True)
class Job:
    """What every process needs to know about the decode."""

    format_id: str
    topic: str
    dt: str
    options: Mapping[str, str]
    envelope: str | None
    changes: str
    rejects: str
    limit: int
    halves: str  # the folder the ranges leave their split-update halves in, by bucket of their pair key
    buckets: int
    tables: TableFilter | None = None


def file_lines(path: str | Path, format_id: str) -> Iterator[Line]:
    """The lines of one extract file with their 1-based numbers (`.gz` read through gzip)."""
    path = Path(path)
    codec = get_codec(format_id)
    uri = spark_file_uri(path)
    if is_avro_container(str(path), codec):
        yield from container_lines(uri, path.read_bytes())
        return
    damage = check_gzip_inputs([str(path)])
    readable = damage.readable_files([str(path)])[0]
    opener = gzip.open if readable.lower().endswith(".gz") else open
    header = None
    with opener(readable, "rb") as fh:
        for number, raw in enumerate(fh.read().splitlines(), start=1):
            if number == 1 and has_csv_header(str(path), codec):
                header = raw.decode("utf-8", "replace")
                continue
            yield Line(uri, number, raw, header=header)
    for _, line, reason in damage.reject_lines():
        yield Line(uri, line, b"", pre_reject=reason)


def source_lines(source: Source, format_id: str) -> Iterator[list[Line]]:
    """A source's lines in batches of at most `BATCH_LINES`, numbered."""
    if isinstance(source, ByteRange):
        uri, number = spark_file_uri(source.path), source.first_line
        for block in range_blocks(source):
            raw = block.splitlines()
            for at in range(0, len(raw), BATCH_LINES):
                yield [Line(uri, number + i, value) for i, value in enumerate(raw[at : at + BATCH_LINES], at)]
            number += len(raw)
        return
    lines = iter(source.lines if isinstance(source, HeldLines) else file_lines(source.path, format_id))
    while batch := list(islice(lines, BATCH_LINES)):
        yield batch


def decode_range(job: Job, source: Source) -> RangeResult:
    """Decode one source: events and rejects to Parquet files of `changes` and `rejects`, the rest reported
    back. The cycle collector stays off (`no_cycle_collection`): a source is a process's whole work, and its
    rows hold no cycles."""
    identity = DeliveryIdentity(get_codec(job.format_id).delivery_fields)
    files, rejects = _partition_files(job)
    out = RangeResult(counts=dict.fromkeys(MESSAGE_COUNTS, 0))
    with no_cycle_collection():
        for lines in source_lines(source, job.format_id):
            rows = []
            for row in decoded_rows(job.format_id, job.topic, lines, job.options, job.envelope, job.limit):
                (out.halves if is_half(row) else rows).append(row)
            _write(job, files, rejects, *_tallied(job, rows, len(lines), out, identity))
        _leave_halves(job, out.halves)
    out.halves = []
    out.files, out.reject_files = files.close(), rejects.close()
    return out


def _partition_files(job: Job) -> tuple[_Files, _Files]:
    """The writers of the day's partition of `changes` and of `rejects`."""
    folder = partition_dir(_fixed(job), PARTITION_COLUMNS)
    return _Files(job.changes, folder), _Files(job.rejects, folder, REJECTS_DIR)


def _write(job: Job, files: _Files, rejects: _Files, events: list[dict], bad: list[dict]) -> None:
    if events:
        files.write(lake_table(events, CANONICAL_SCHEMA, _fixed(job)))
    if bad:
        rows = [row | {"reason": row["reject_reason"]} for row in bad]
        rejects.write(lake_table(rows, REJECTS_SCHEMA, _fixed(job)))


def _leave_halves(job: Job, halves: list[dict]) -> None:
    """A range's halves written to `job.halves`, one file per bucket of their pair keys: every half of a
    key meets the others in one bucket, which one process pairs (`pair_bucket`)."""
    by_bucket: dict[int, list[dict]] = {}
    for half in halves:
        by_bucket.setdefault(zlib.crc32(half["pair_key"].encode()) % job.buckets, []).append(half)
    for bucket, rows in by_bucket.items():
        with open(os.path.join(job.halves, f"{bucket}-{uuid.uuid4()}.pickle"), "wb") as fh:
            pickle.dump(rows, fh, protocol=pickle.HIGHEST_PROTOCOL)


def _tallied(
    job: Job, rows: list[dict], read: int, out: RangeResult, identity: DeliveryIdentity
) -> tuple[list[dict], list[dict]]:
    """The events the table filter keeps and the rejects of finished `rows`; their counts (with `read`
    messages) and the events' hashes added to `out`; a left out event is marked `filtered`."""
    if job.tables is not None:
        for row in rows:
            row["filtered"] = row["reject_reason"] is None and not job.tables.keeps(row["db"], row["table_name"])
    for key, value in decoded_counts(rows, read).items():
        out.counts[key] += value
    events = [row for row in rows if row["reject_reason"] is None and not row.get("filtered")]
    if events:
        out.hashes.append(hash_array(events, identity))
    return events, [row for row in rows if row["reject_reason"] is not None]


def numbered_ranges(ranges: Sequence[ByteRange], lines: Sequence[int]) -> list[ByteRange]:
    """`ranges` (in file order) with the number of their first line, from each range's line count."""
    starts: dict[str, int] = {}
    out = []
    for r, n in zip(ranges, lines, strict=True):
        first = starts.get(r.path, 1)
        out.append(ByteRange(r.path, r.start, r.end, first))
        starts[r.path] = first + n
    return out


def lake_table(rows: list[dict], schema, constants: Mapping[str, object] | None = None) -> pa.Table:
    """Rows (every column of `schema` but `constants`, columns of one value; times as epoch micros) as an
    Arrow table of the lake's schema."""
    target = delta_rs.arrow_schema(schema)
    return pa.Table.from_batches([rows_to_batch(rows, target, constants)], schema=target)


def _mark_repeats(root: str, files: list[dict], prefixes: list[str], delivery_fields) -> None:
    """Mark, in the written files, each event repeating an earlier one among `prefixes`' events; the files
    holding one are written again (nothing is committed yet)."""
    if not prefixes:
        return
    wanted, rows, held = pa.array(prefixes), [], []
    for f in files:
        table = pq.ParquetFile(os.path.join(root, f["path"])).read()  # not read_table: no folder names read
        hit = pc.is_in(pc.utf8_slice_codeunits(table.column("event_id"), 0, ID_PREFIX), value_set=wanted)
        if pc.any(hit).as_py():
            rows += batch_rows(table.filter(hit).combine_chunks().to_batches()[0])
            held.append(f)
    mark_redeliveries(rows, delivery_fields)
    repeats = {e["event_id"]: e["meta"] for e in rows if DUPLICATE_OF in (e["meta"] or {})}
    for f in held:  # a repeat is a candidate: only the files holding one can hold a repeat
        full = os.path.join(root, f["path"])
        table = pq.ParquetFile(full).read()
        ids = table.column("event_id").to_pylist()
        if not any(i in repeats for i in ids):
            continue
        metas = [repeats.get(i, m) for i, m in zip(ids, map_dicts(table.column("meta").combine_chunks()), strict=True)]
        table = table.set_column(table.schema.get_field_index("meta"), "meta", map_array(metas))
        pq.write_table(table, full, compression="snappy")
        f["size"] = os.path.getsize(full)


def _commit(job: Job, name: str, files: list[dict]) -> int:
    """One Delta commit replacing the day's partition of the table `name` (`changes` or `rejects`) with
    `files`; the new version."""
    from deltalake import DeltaTable
    from deltalake.transaction import AddAction

    path = job.changes if name == CHANGES_DIR else job.rejects
    schema = delta_rs.arrow_schema(_SCHEMAS[name])
    if not DeltaTable.is_deltatable(path):
        DeltaTable.create(path, schema, mode="ignore", partition_by=list(PARTITION_COLUMNS),
                          configuration=TABLE_PROPERTIES[name])  # fmt: skip
    now = int(time.time() * 1000)
    values = {"dt": job.dt, "source_topic": job.topic}
    stats = (
        {"numRecords": f["rows"], "minValues": f["min"], "maxValues": f["max"], "nullCount": f["nulls"]} for f in files
    )
    adds = [
        AddAction(f["path"], f["size"], values, now, True, json.dumps(s)) for f, s in zip(files, stats, strict=True)
    ]
    table = DeltaTable(path)
    held = pa.schema(table.schema().to_arrow())
    if set(schema.names) <= set(held.names):  # a table a later release widened keeps its columns
        schema = held
    table.create_write_transaction(
        adds, mode="overwrite", schema=schema, partition_by=list(PARTITION_COLUMNS),
        partition_filters=[(k, "=", v) for k, v in values.items()],
    )  # fmt: skip
    return DeltaTable(path).version()


def _fixed(job: Job) -> dict[str, str]:
    return {"source_format": job.format_id, "source_topic": job.topic, "dt": job.dt}


def pair_bucket(job: Job, bucket: int) -> RangeResult:
    """The split-update halves of one bucket, of every range, paired in input order and written like a
    range's events (the unpaired become rejects, as in `messages.pair_halves`)."""
    codec = get_codec(job.format_id)
    out = RangeResult(counts=dict.fromkeys(MESSAGE_COUNTS, 0))
    halves = []
    with no_cycle_collection():
        for name in sorted(os.listdir(job.halves)):
            if name.startswith(f"{bucket}-"):
                with open(os.path.join(job.halves, name), "rb") as fh:
                    halves += pickle.load(fh)
        paired = list(pair_halves_in_memory(halves, codec.update_has_before))
        files, rejects = _partition_files(job)
        _write(job, files, rejects, *_tallied(job, paired, 0, out, DeliveryIdentity(codec.delivery_fields)))
        out.files, out.reject_files = files.close(), rejects.close()
    return out


def sources_of(files: Sequence[str], format_id: str, workers: int) -> list[Source]:
    """Local `files` as sources for `workers` processes: files of plain lines cut in byte ranges, the rest whole."""
    plain = [local_path(f) for f in files if splittable(f, format_id)]
    return [*(byte_ranges(plain, workers) if plain else []),
            *(WholeFile(local_path(f)) for f in files if not splittable(f, format_id))]  # fmt: skip


def decode_with_processes(
    format_id: str,
    files: Sequence[str],
    *,
    topic: str,
    dt: str,
    out: str | Path,
    workers: int = 1,
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
    lines: Sequence[Line] | None = None,
) -> dict[str, int]:
    """Decode local `files` (or `lines` already read) with `workers` processes (one: this process) and replace
    the `(dt, topic)` partition of the lake's `changes`, `rejects` and run counts (in that order, as the Spark
    decode commits them); the counts, checked for conservation before `rejects` is committed."""
    codec = get_codec(format_id)
    root = local_path(out)
    sources: list[Source] = [HeldLines(lines)] if lines is not None else sources_of(files, format_id, workers)
    workers = max(1, min(workers, len(sources)))
    # the halves beside the lake, on its disk (not the system's temporary folder, maybe small or in memory)
    os.makedirs(root, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="_cdc-halves-", dir=root) as halves:
        job = Job(format_id, topic, dt, dict(codec.resolve_options(dict(options or {}))), envelope,
                  os.path.join(root, CHANGES_DIR), os.path.join(root, REJECTS_DIR), max_message_chars(), halves,
                  workers, tables)  # fmt: skip
        # the cycle collector off while the processes' results are read back: unpickling rows with it on took
        # 6x as long (100,000 split-update halves: 2.4 s against 0.4 s)
        with no_cycle_collection(), process_map(workers) as run:
            ranges = [s for s in sources if isinstance(s, ByteRange)]
            numbered = [*numbered_ranges(ranges, run(count_lines, ranges)),
                        *(s for s in sources if not isinstance(s, ByteRange))]  # fmt: skip
            results = run(decode_range, [job] * len(numbered), numbered)
            if os.listdir(halves):
                results += run(pair_bucket, [job] * job.buckets, range(job.buckets))
    written = [f for result in results for f in result.files]
    hashes = [h for result in results for h in result.hashes]
    counts = {k: sum(result.counts[k] for result in results) for k in MESSAGE_COUNTS}
    _mark_repeats(job.changes, written, candidate_prefixes(hashes), codec.delivery_fields)
    _commit(job, CHANGES_DIR, written)
    check_message_counts(counts)  # before `rejects`: a run that loses a message commits no rejects nor counts
    _commit(job, REJECTS_DIR, [f for result in results for f in result.reject_files])
    write_counts(None, root, dt, {topic: counts})
    return counts


def decode_without_spark(
    format_id: str,
    inputs: Sequence[str],
    *,
    topic: str,
    dt: str,
    out: str | Path,
    conf: Mapping[str, str],
    options: Mapping[str, str] | None = None,
    envelope: str | None = None,
    tables: TableFilter | None = None,
) -> dict[str, int] | None:
    """Decode `inputs` into the `(dt, topic)` partition of the lake `out` in this process or by the pool,
    and commit `changes`, `rejects` and the run counts; the counts, or None where Spark has to decode them
    (nothing written). `conf`: the process's settings and the command's."""
    workers, files = local_engine(inputs, str(out), conf)
    if not workers:
        return None
    return decode_with_processes(format_id, files, topic=topic, dt=dt, out=out, workers=workers, options=options,
                                 envelope=envelope, tables=tables)  # fmt: skip


def local_engine(inputs: Sequence[str], out: str, conf: Mapping[str, str]) -> tuple[int, list[str]]:
    """(the processes that decode `inputs` without Spark, the files), or (0, []) where Spark decodes them (the
    inputs or the lake off local disk, or too large for no pool): the choice `decode_without_spark` makes, the
    inputs listed once. Whether settings ask for Spark is the engine table's question (`engines.choice`)."""
    if delta_rs.local_table_path(out) is None or any(local_path(i) is None for i in inputs):
        return 0, []
    files = list_input_files(inputs)
    workers = processes(conf, files)
    return (workers, files) if workers else (0, [])
