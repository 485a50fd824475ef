"""The files an input names: files as given, folders walked (hidden and `_` files skipped); a CSV file by its name."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cdc_pipelines.formats.base import Codec
from cdc_pipelines.runtime import storage
from cdc_pipelines.runtime.session import active_spark

# suffixes Spark's readers decompress through a codec (a file read whole, never cut in byte ranges)
COMPRESSED = (".gz", ".bz2", ".deflate", ".zst", ".lz4", ".snappy", ".xz")


class InputError(ValueError):
    """Inputs that do not exist or hold no files."""


def list_input_files(inputs: Iterable[str | Path]) -> list[str]:
    """Files named by `inputs`, folders walked recursively, hidden and `_`-prefixed files skipped.

    Local paths (and `file:` URIs) are walked here; other URIs (`s3a://`, `oss://`, `hdfs://`) are
    listed by Hadoop's FileSystem in the process's Spark session.
    """
    files: list[str] = []
    for item in inputs:
        local = storage.local_path(item)
        if local is None:
            files.extend(_hadoop_files(str(item)))
            continue
        path = Path(local)
        if path.is_file():
            files.append(str(path.resolve()))
        elif path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and not storage.is_hidden(p.relative_to(path)))
            files.extend(str(p.resolve()) for p in found)
        else:
            raise InputError(f"input does not exist: {item}")
    if not files:
        raise InputError("no input files found in: " + ", ".join(map(str, inputs)))
    return files


def _hadoop_files(uri: str) -> list[str]:
    spark = active_spark()
    if not storage.exists(spark, uri):
        raise InputError(f"input does not exist: {uri}")
    if not storage.is_dir(spark, uri):
        return [storage.qualified(spark, uri)]
    return storage.list_files(spark, uri)


def is_csv(path: str) -> bool:
    """Whether a file is CSV by its name, a compression suffix aside (`x.csv.gz`)."""
    name = path.lower()
    for suffix in COMPRESSED:
        name = name.removesuffix(suffix)
    return name.endswith(".csv")


def has_csv_header(path: str, codec: Codec) -> bool:
    """Whether a file's first line is a CSV header, not a message: a CSV file of a tuple format."""
    return codec.messages == "tuple" and is_csv(path)


def is_avro_container(path: str, codec: Codec) -> bool:
    """Whether a file is an Avro container of an Avro format's records (read by record, not by line)."""
    return codec.messages == "avro" and path.lower().endswith(".avro")
