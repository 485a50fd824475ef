"""Days of a local lake re-encoded in this process, without Spark: no JVM for a small day's targets.

A new Spark process spends 15-20 s on its start and first jobs however few events a day holds, and the
encoders are plain Python the Spark path runs in `mapInArrow` batches anyway. So where the lake and the
target folder are on local disk, nothing asks for Spark and the days hold at most `MAX_EVENTS_SETTING`
events (by the files' statistics), the events are read with delta-rs, encoded by the same batch function
(`runner.encoded_batch`), and written as Spark writes them: each `dt=/source_topic=` folder of the days
read replaced whole, a folder that gets no message removed, the messages in input order, DTS Avro as
`.avro` containers (`avro_containers.write_partition`), the skipped events in `_skipped/` (committed
by delta-rs). `tests/encode/test_in_process.py` holds the two paths to the same files, byte for byte.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines.encode.avro_containers import remove_containers, write_partition
from cdc_pipelines.encode.runner import ENCODED_SCHEMA, ORDER, SKIPPED_SCHEMA, encoded_batch
from cdc_pipelines.formats import get_codec
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.io import table_version
from cdc_pipelines.lake.layout import SKIPPED_DIR
from cdc_pipelines.lake.partition_paths import partition_dir
from cdc_pipelines.model.canonical import PARTITION_COLUMNS
from cdc_pipelines.model.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA
from cdc_pipelines.runtime.processes import process_map, processes, workers_for
from cdc_pipelines.runtime.python_workers import no_cycle_collection
from cdc_pipelines.runtime.settings import whole_number
from cdc_pipelines.runtime.storage import join, local_path

# the setting (`--conf` or CDC_SPARK_CONF) of the most events a run encodes in process; 0 turns it off.
# A bound on memory (the encoded messages are held until written) more than on time
# (docs/benchmarks-history.md, *encode without a JVM*)
MAX_EVENTS_SETTING = "cdc.encode.in_process_max_events"
DEFAULT_MAX_EVENTS = 200_000
BATCH_ROWS = 4096  # events handed to the encoder at once, as Spark's Arrow batches hand them
# the setting of the processes that encode a large run (default: one per core; 1: this process alone)
PROCESSES_SETTING = "cdc.encode.processes"


def max_events(conf: Mapping[str, str]) -> int:
    """The most events encoded in process (`MAX_EVENTS_SETTING` in `conf`); 0: none."""
    return whole_number(conf, MAX_EVENTS_SETTING, DEFAULT_MAX_EVENTS)


def encodes_in_process(changes: str, target: str, dts: Sequence[str] | None, conf: Mapping[str, str]) -> bool:
    """Whether the days `dts` (all when None) of the table `changes` can be encoded into `target` in this
    process: both are on local disk, and the days hold at most `MAX_EVENTS_SETTING` events (in `conf`) by the
    files' statistics. Whether the run's settings ask for Spark is the engine table's (`engines.choice`)."""
    limit = max_events(conf)
    if limit <= 0 or delta_rs.local_table_path(target) is None:
        return False
    counts = delta_rs.partition_counts(changes, "dt")
    if counts is None:  # no local table
        return False
    return sum(counts.get(dt, 0) for dt in (counts if dts is None else dts)) <= limit


def encode_in_process(
    changes: str,
    target: str,
    format_id: str,
    dts: Sequence[str] | None = None,
    topics: Sequence[str] | None = None,
    options: Mapping[str, str] | None = None,
    processes: int = 1,
) -> dict[str, dict[str, int]]:
    """Re-encode the days `dts` (all when None) of `topics` (all when None) of the local table `changes`
    into `target/dt=/source_topic=/`: `written`, `skipped` and `encoded` per day, as
    `runner.write_encoded_by_day` counts them. Days of at least `processes.POOL_MIN_ROWS` events are encoded by
    `processes` processes (`runtime.processes`), each every n-th row group of them."""
    counts = delta_rs.partition_counts(changes, "dt") or {}
    days = tuple(sorted(counts) if dts is None else dts)
    events = sum(counts.get(d, 0) for d in days)
    workers = workers_for(events, processes, BATCH_ROWS)
    # every process reads this version of the table: they deal its row groups out by their order in it
    version = table_version(None, changes)
    wanted = None if topics is None else tuple(topics)
    shares = [_Share(changes, version, days, wanted, format_id, dict(options or {}), k, workers, BATCH_ROWS)
              for k in range(workers)]  # fmt: skip
    with process_map(workers) as run:
        encoded = sorted((part for share in run(_encode_share, shares) for part in share), key=lambda p: p[0])
    schema = to_arrow_schema(ENCODED_SCHEMA)
    # the batches back in their order before the (stable) sort: rows whose lineage ties keep it, as in one process
    rows = pa.Table.from_batches([batch for _, batch in encoded], schema=schema)
    return _write_rows(rows, target, format_id)


def encode_processes(conf: Mapping[str, str]) -> int:
    """The processes that encode a large run (`PROCESSES_SETTING` in `conf`, else one per core; 0: 1)."""
    return max(1, processes(conf, PROCESSES_SETTING))


@dataclass(frozen=True)
class _Share:
    """One process's part of an encode: every `of`-th row group of each day's events, from the `index`-th."""

    changes: str
    version: int | None
    days: tuple[str, ...]
    topics: tuple[str, ...] | None
    format_id: str
    options: dict[str, str]
    index: int
    of: int
    batch_rows: int


def _encode_share(share: _Share) -> list[tuple[tuple[int, int], pa.RecordBatch]]:
    """The share's batches encoded, each with its place among all the batches (its day's, its row group's)."""
    codec = get_codec(share.format_id)
    options, schema = codec.resolve_options(dict(share.options)), to_arrow_schema(ENCODED_SCHEMA)
    batches = _day_batches(share.changes, share.days, share.topics, share.batch_rows, share.version,
                           (share.index, share.of))  # fmt: skip
    with no_cycle_collection():
        return [(place, encoded_batch(b, codec.encode_event, options, schema)) for place, b in batches]


def _write_rows(rows: pa.Table, target: str, format_id: str) -> dict[str, dict[str, int]]:
    """`rows` (`ENCODED_SCHEMA`) written in input order, each partition of the events replaced; the counts."""
    codec = get_codec(format_id)
    binary, lines = codec.containers, codec.binary_messages and not codec.containers
    rows = rows.sort_by([(c, "ascending") for c in ORDER])
    counts: dict[str, dict[str, int]] = {}
    partitions: list[dict[str, str]] = []
    root = local_path(target)
    # the `(dt, source_topic)` of the events read, in order: each is replaced, even with no message
    pairs = rows.select(["dt", "source_topic"]).group_by(["dt", "source_topic"]).aggregate([])
    for dt, topic in sorted(zip(pairs["dt"].to_pylist(), pairs["source_topic"].to_pylist(), strict=True)):
        part = rows.filter(pc.and_(pc.equal(rows["dt"], dt), pc.equal(rows["source_topic"], topic)))
        skipped = part["skip_reason"].is_valid()
        messages = part.filter(pc.invert(skipped))
        day = counts.setdefault(dt, dict.fromkeys(("written", "skipped", "encoded"), 0))
        day["written"] += messages.num_rows
        day["skipped"] += part.num_rows - messages.num_rows
        day["encoded"] += pc.sum(pc.equal(messages["part"], 0)).as_py() or 0
        partition = {"dt": dt, "source_topic": topic}
        partitions.append(partition)
        folder = os.path.join(root, partition_dir(partition, PARTITION_COLUMNS))
        if binary:
            _write_containers(folder, messages)
        elif lines:  # binary messages not in containers: `value_b64` lines, as a Kafka dump holds them
            _write_text(folder, pc.binary_join_element_wise('{"value_b64":"', messages["message"], '"}', ""))
        else:
            _write_text(folder, messages["message"])
    if partitions:
        _replace_skipped(rows, target, format_id, partitions)
    return counts


def _day_batches(
    changes: str, dts: Sequence[str], topics: Sequence[str] | None, batch_rows: int, version: int | None,
    share: tuple[int, int],
) -> Iterator[tuple[tuple[int, int], pa.RecordBatch]]:  # fmt: skip
    """The share's events of the days `dts` of `topics` (`delta_rs.shared_batches`), a batch at a time with its
    place (the day's, its row group's), times as UTC instants (as the Spark path's batches give them)."""
    schema = delta_rs.arrow_schema(CANONICAL_SCHEMA)
    wanted = None if topics is None else pa.array(list(topics), pa.string())
    for day, dt in enumerate(dts):
        for place, batch in delta_rs.shared_batches(changes, "dt", dt, CANONICAL_COLUMNS, share, batch_rows, version):
            batch = pa.Table.from_batches([batch]).select(list(CANONICAL_COLUMNS)).cast(schema)
            if wanted is not None:
                batch = batch.filter(pc.is_in(batch["source_topic"], wanted))
            yield from (((day, place), b) for b in batch.to_batches())


def _write_text(folder: str, messages: pa.ChunkedArray) -> None:
    """The partition folder replaced whole by one holding one file of `messages`, a line each, or removed
    when there are none, as Spark's dynamic partition overwrite replaces it: the new folder is written
    aside under a hidden name (readers skip it, and so does a later run if this one fails), the old one
    removed, the new one renamed (a reader may find the partition missing in between, as with Spark)."""
    if not len(messages):
        _remove_folder(folder)
        return
    parent, name = os.path.split(folder)
    os.makedirs(parent, exist_ok=True)
    aside = os.path.join(parent, f".{name}.{uuid.uuid4()}.tmp")
    os.mkdir(aside)
    with open(os.path.join(aside, f"part-00000-{uuid.uuid4()}.c000.txt"), "w", encoding="utf-8", newline="\n") as out:
        for start in range(0, len(messages), BATCH_ROWS):  # a slice at a time as Python text
            out.writelines(m + "\n" for m in messages.slice(start, BATCH_ROWS).to_pylist())
    _remove_folder(folder)
    os.rename(aside, folder)


def _write_containers(folder: str, messages: pa.Table) -> None:
    """The partition's `.avro` containers, as `avro_containers` writes them from Spark's tasks; with no
    message, the containers an earlier run left there removed (the folder stays, as Spark leaves it)."""
    fs = pafs.LocalFileSystem()
    if not messages.num_rows:
        remove_containers(fs, folder)
        return
    write_partition(fs, folder, zip(*(messages[c].to_pylist() for c in ("message", "older_schema")), strict=True))


def _remove_folder(folder: str) -> None:
    if os.path.isdir(folder):
        pafs.LocalFileSystem().delete_dir(folder)


def _replace_skipped(rows: pa.Table, target: str, format_id: str, partitions: list[dict[str, str]]) -> None:
    """`runner._replace_skipped` by delta-rs: the partitions' skipped events replace an earlier run's; a
    run that skipped none creates no table."""
    path = local_path(join(target, SKIPPED_DIR))
    skipped = rows.filter(rows["skip_reason"].is_valid())
    if not skipped.num_rows and delta_rs.partition_counts(path, "dt") is None:
        return
    names = [f.name for f in SKIPPED_SCHEMA.fields]
    table = pa.table({
        **{n: skipped[n] for n in names if n != "target"},
        "target": pa.array([format_id] * skipped.num_rows, pa.string()),
    }).select(names)  # fmt: skip
    delta_rs.replace_partitions(table, path, partitions, SKIPPED_SCHEMA, PARTITION_COLUMNS)
