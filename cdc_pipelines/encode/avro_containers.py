"""Encoded DTS Avro messages -> `.avro` container files, one per `dt`/`source_topic` partition.

Spark has no built-in Avro writer (spark-avro is a separate package), so each task writes its
partitions' containers, streaming records in order: fastavro writes the header, and the encoded
messages go into data blocks byte for byte (a block is records' bytes back to back). A record of an
older DTS writer (no `bornTimestamp`) goes to a container of that schema, as the encoder tagged it
(`older_schema`). Folders are named as Spark names partition folders, and a partition's files are
replaced whole (locally written aside, then renamed; on an object store a file appears when its
upload completes), so a rerun replaces exactly the partitions it writes, as the text targets do.
Tasks write through `pyarrow.fs` (`worker_fs`): local disk, `hdfs://`, `s3a://` and `oss://`.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Container, Iterable, Iterator, Mapping
from itertools import groupby
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
from fastavro.write import Writer
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines.formats.dts_avro_records import container_schema
from cdc_pipelines.lake.partition_paths import partition_dir
from cdc_pipelines.model.canonical import PARTITION_COLUMNS
from cdc_pipelines.runtime.worker_fs import WorkerFs, worker_fs

CONTAINER_FILES = {False: "part-00000.avro", True: "part-00000-older-writer.avro"}
BLOCK_RECORDS, BLOCK_BYTES = 4096, 1 << 20
WRITTEN_SCHEMA = T.StructType(
    [
        T.StructField("dt", T.StringType()),
        T.StructField("source_topic", T.StringType()),
        T.StructField("path", T.StringType()),
        T.StructField("records", T.LongType()),
    ]
)


def _varlong(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)  # zig-zag
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _Container:
    """One `.avro` container being written: header, then blocks of raw records."""

    def __init__(self, fs: pafs.FileSystem, path: str, older: bool):
        self.fs, self.path, self.count, self.block, self.block_bytes = fs, path, 0, [], 0
        local = isinstance(fs, pafs.LocalFileSystem)
        folder, name = path.rsplit("/", 1)
        self.written = f"{folder}/.{name}.{os.getpid()}.tmp" if local else path
        self.handle = fs.open_output_stream(self.written)
        self.sync = Writer(self.handle, container_schema(older)).sync_marker  # writes the header

    def append(self, record: bytes) -> None:
        self.count += 1
        self.block.append(record)
        self.block_bytes += len(record)
        if len(self.block) >= BLOCK_RECORDS or self.block_bytes >= BLOCK_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.block:
            data = b"".join(self.block)
            self.handle.write(_varlong(len(self.block)) + _varlong(len(data)) + data + self.sync)
            self.block, self.block_bytes = [], 0

    def close(self) -> None:
        self.flush()
        self.handle.close()
        if self.written != self.path:
            self.fs.move(self.written, self.path)


class ContainerPartition:
    """A partition's containers: records of older writers (no `bornTimestamp`) go to a file of their own."""

    def __init__(self, fs: pafs.FileSystem, folder: str):
        self.fs, self.folder, self.files = fs, folder, {}
        fs.create_dir(folder, recursive=True)

    def append(self, record: bytes, older: bool) -> None:
        if older not in self.files:
            self.files[older] = _Container(self.fs, f"{self.folder}/{CONTAINER_FILES[older]}", older)
        self.files[older].append(record)

    def close(self) -> list[tuple[str, int]]:
        remove_containers(self.fs, self.folder, kept=self.files)  # a rerun leaves no file of an earlier run behind
        for container in self.files.values():
            container.close()
        return [(str(c.path), c.count) for c in self.files.values()]


def remove_containers(fs: pafs.FileSystem, folder: str, kept: Container[bool] = ()) -> None:
    """Remove the containers an earlier run left in the partition `folder`, but those of `kept` (older writer
    or not, as `CONTAINER_FILES` keys them)."""
    for older, name in CONTAINER_FILES.items():
        path = f"{folder}/{name}"
        if older not in kept and fs.get_file_info(path).type != pafs.FileType.NotFound:
            fs.delete_file(path)


def write_partition(fs: pafs.FileSystem, folder: str, messages: Iterable[tuple[str, bool]]) -> list[tuple[str, int]]:
    """A partition's (base64 message, older schema) in order, as its containers (replacing an earlier run's):
    (path, records) of each file. Run by Spark's tasks and by the local encode alike."""
    partition = ContainerPartition(fs, folder)
    for message, older in messages:
        partition.append(base64.b64decode(message), older)
    return partition.close()


def _write_partitions(target: str, where: WorkerFs):
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fs, root = where.open(target)
        schema = to_arrow_schema(WRITTEN_SCHEMA)
        names = ("dt", "source_topic", "message", "older_schema")
        rows = (row for b in batches for row in zip(*(b.column(c).to_pylist() for c in names), strict=True))
        for (dt, topic), group in groupby(rows, key=lambda row: row[:2]):
            folder = f"{root}/{partition_dir({'dt': dt, 'source_topic': topic}, PARTITION_COLUMNS)}"
            written = write_partition(fs, folder, (row[2:] for row in group))
            yield pa.RecordBatch.from_pylist([{"dt": dt, "source_topic": topic, "path": p, "records": n}
                                              for p, n in written], schema=schema)  # fmt: skip

    return run


def write_avro_containers(ordered: DataFrame, target: str | Path, replace: Iterable[Mapping] = ()) -> list[dict]:
    """Write `ordered` (`dt`, `source_topic`, base64 `message`, `older_schema`; partitioned and sorted)
    as containers.

    The partitions in `replace` that get no message lose the containers an earlier run left there.
    """
    where = worker_fs(ordered.sparkSession, str(target))
    records = ordered.select("dt", "source_topic", "message", "older_schema")
    written = records.mapInArrow(_write_partitions(str(target), where), WRITTEN_SCHEMA)
    rows = [row.asDict() for row in written.collect()]  # one row per container file written
    filled = {(r["dt"], r["source_topic"]) for r in rows}
    fs, root = where.open(str(target))
    for p in replace:
        if (p["dt"], p["source_topic"]) not in filled:
            remove_containers(fs, f"{root}/{partition_dir(p, PARTITION_COLUMNS)}")
    return rows
