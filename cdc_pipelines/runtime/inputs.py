"""Input files on any storage, reached where no session is at hand: a local file directly (no JVM
started), any other URI through Hadoop in the process's SparkSession (`session.active_spark`).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import BinaryIO

from cdc_pipelines.runtime import storage
from cdc_pipelines.runtime.session import active_spark


def open_input(path: str | Path) -> BinaryIO:
    """`path` opened for reading bytes: local files directly, any other URI through Hadoop."""
    local = storage.local_path(path)
    if local is not None:
        return open(local, "rb")  # noqa: SIM115 - the caller closes it
    return storage.open_read(active_spark(), path)


# what java.net.URI leaves unquoted in a path besides letters and digits (its "unreserved" marks, "punct"
# characters, "/" and "@"); it quotes every other ASCII character, "%" included, and keeps non-ASCII ones
_URI_PATH_SAFE = frozenset("/-_.!~*'();:@&=+$,")


def _uri_char(ch: str) -> str:
    if ch.isascii():
        return ch if ch.isalnum() or ch in _URI_PATH_SAFE else "".join(f"%{b:02X}" for b in ch.encode())
    # Java's "other" characters stay as they are; its ISO control and space characters are quoted
    if 0x80 <= ord(ch) <= 0x9F or unicodedata.category(ch) in ("Zs", "Zl", "Zp"):
        return "".join(f"%{b:02X}" for b in ch.encode())
    return ch


def spark_file_uri(path: str | Path) -> str:
    """A file as Spark's `_metadata.file_path` names it: Hadoop's `Path.toUri()` (`file:/a/b%20c/dt=1`
    locally, `s3a://bucket/a%20b` elsewhere), so lineage and line numbering agree on one name."""
    local = storage.local_path(path)
    if local is not None:
        return "file:" + "".join(map(_uri_char, str(Path(local).resolve())))
    jvm = active_spark().sparkContext._jvm
    return str(jvm.org.apache.hadoop.fs.Path(str(path)).toUri().toString())
