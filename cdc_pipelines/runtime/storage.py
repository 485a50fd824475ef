"""Paths as URIs on any filesystem Hadoop reaches (`file:`, `hdfs://`, `s3a://`, `oss://`).

Data paths never go through `os` or `pathlib`: the driver asks Hadoop's FileSystem in Spark's JVM, so
a path works wherever Spark's own readers and writers work, with the same settings and credentials
(`--conf spark.hadoop.fs.s3a.endpoint=...`). Local paths stay plain paths (Hadoop reads them from the
local filesystem of a local master and from the cluster's default filesystem otherwise).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import BinaryIO

from pyspark.sql import SparkSession

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
CHUNK = 1 << 20


def is_uri(text: str | Path) -> bool:
    """Whether `text` names its scheme (`s3a://b/k`, `file:/x`), so it is not a local path to resolve."""
    return bool(_SCHEME.match(str(text)))


def absolute(text: str | Path) -> str:
    """A URI as given; a local path made absolute (Spark's JVM and GX resolve relative ones elsewhere)."""
    text = str(text)
    return text if is_uri(text) else os.path.abspath(text)


def join(root: str | Path, *parts: str) -> str:
    """`root/part/...` for URIs and local paths alike."""
    out = str(root).rstrip("/")
    for part in parts:
        out = f"{out}/{part.strip('/')}"
    return out


def local_path(path: str | Path) -> str | None:
    """The local filesystem path of `path` (`file:` URIs included), or None where it is elsewhere."""
    text = str(path)
    if not is_uri(text):
        return text
    if text.startswith("file:"):
        return "/" + text.removeprefix("file:").lstrip("/")
    return None


def _fs(spark: SparkSession, path: str):
    jvm = spark.sparkContext._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hpath


def qualified(spark: SparkSession, path: str | Path) -> str:
    """`path` as Hadoop names it (`file:/abs/x`, `s3a://bucket/x`): the form Spark's `_metadata` uses."""
    fs, hpath = _fs(spark, str(path))
    return str(fs.makeQualified(hpath).toString())


def exists(spark: SparkSession, path: str | Path) -> bool:
    fs, hpath = _fs(spark, str(path))
    return bool(fs.exists(hpath))


def is_dir(spark: SparkSession, path: str | Path) -> bool:
    fs, hpath = _fs(spark, str(path))
    return bool(fs.exists(hpath) and fs.getFileStatus(hpath).isDirectory())


def delete(spark: SparkSession, path: str | Path) -> None:
    """Remove `path` and everything under it, if it exists."""
    fs, hpath = _fs(spark, str(path))
    if fs.exists(hpath):
        fs.delete(hpath, True)


def file_sizes(spark: SparkSession, path: str | Path) -> dict[str, int]:
    """Files under the folder `path` (qualified names, sorted) and their sizes, hidden and `_`-prefixed
    parts skipped; one recursive listing (a few requests on an object store, not one per folder)."""
    fs, hpath = _fs(spark, str(path))
    root = str(fs.makeQualified(hpath).toString()).rstrip("/")
    found = {}
    listing = fs.listFiles(hpath, True)
    while listing.hasNext():
        status = listing.next()
        name = str(status.getPath().toString())
        rel = name[len(root) :].lstrip("/")
        if not is_hidden(rel):
            found[name] = int(status.getLen())
    return dict(sorted(found.items()))


def is_hidden(relative: str | Path) -> bool:
    """Whether a file is left out of its folder's listing: a part of its path below the folder starts with `.`
    or `_` (as Spark's readers skip `_SUCCESS`, `.crc` files, `_temporary/`)."""
    return any(part.startswith((".", "_")) for part in Path(relative).parts)


def names(spark: SparkSession | None, folder: str | Path) -> list[str]:
    """The names of the entries directly in `folder` (none where it does not exist): one listing, of a
    local folder here (no session needed), else by Hadoop."""
    local = local_path(folder)
    if local is not None:
        return sorted(os.listdir(local)) if os.path.isdir(local) else []
    fs, hpath = _fs(spark, str(folder))
    if not fs.exists(hpath):
        return []
    return sorted(str(status.getPath().getName()) for status in fs.listStatus(hpath))


def list_files(spark: SparkSession, path: str | Path) -> list[str]:
    """Files under the folder `path` (qualified names, sorted), hidden and `_`-prefixed parts skipped."""
    return list(file_sizes(spark, path))


def read_bytes(spark: SparkSession, path: str | Path) -> bytes:
    """The bytes of `path`, through Hadoop's stream, read a `CHUNK` at a time (a whole `read()` would cross
    to the JVM every 8 KiB)."""
    with open_read(spark, path) as fh:
        return b"".join(iter(lambda: fh.read(CHUNK), b""))


def write_bytes(spark: SparkSession, path: str | Path, data: bytes) -> None:
    """Write `data` to `path` (replacing it), through Hadoop's stream (a multipart upload on S3A)."""
    fs, hpath = _fs(spark, str(path))
    stream = fs.create(hpath, True)
    try:
        for start in range(0, len(data), CHUNK):
            stream.write(bytearray(data[start : start + CHUNK]))
    finally:
        stream.close()


def replace_bytes(spark: SparkSession, path: str | Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all: into a hidden sibling first, then renamed over `path`
    (a file whose presence marks work as done must never be seen half written)."""
    fs, hpath = _fs(spark, str(path))
    tmp = str(hpath.getParent().toString()) + f"/.{hpath.getName()}.tmp"
    write_bytes(spark, tmp, data)
    if fs.exists(hpath):
        fs.delete(hpath, False)
    if not fs.rename(_fs(spark, tmp)[1], hpath):
        raise OSError(f"could not rename {tmp} to {path}")


class _HadoopReader(io.RawIOBase):
    """A Hadoop input stream as a Python binary file (gzip, fastavro and line reading take it)."""

    def __init__(self, spark: SparkSession, path: str):
        fs, hpath = _fs(spark, path)
        self._stream = fs.open(hpath)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk = bytes(self._stream.readNBytes(min(len(buffer), CHUNK)))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()


def open_read(spark: SparkSession, path: str | Path) -> BinaryIO:
    """`path` opened for reading bytes through Hadoop's stream, as a buffered Python binary file."""
    return io.BufferedReader(_HadoopReader(spark, str(path)), CHUNK)


def copy_from_local(spark: SparkSession, local: str, target: str | Path) -> None:
    """Copy the local folder `local` to `target` (replacing it), file by file through Hadoop's output
    streams, the path Spark's own writers take (S3A's `copyFromLocalFile` goes through its transfer
    manager, which an S3 server that mishandles `Expect: 100-continue` fails)."""
    delete(spark, target)
    for path in sorted(Path(local).rglob("*")):
        if path.is_file():
            write_bytes(spark, join(target, *path.relative_to(local).parts), path.read_bytes())
