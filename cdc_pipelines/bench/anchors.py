"""What a user could run instead, on the same bytes: the anchors our decode and encode are held to.

- the Spark floor: `read.text` + `from_json` with the format's fixed schema + Parquet write, no
  normalisation (no Spark design of this conversion can do less work);
- DuckDB: `read_json` -> Parquet, and for encode Parquet -> JSON lines, the embedded engine a user
  might pick instead (lossy on numbers, see DESIGN.md, and without any CDC semantics);
- `cat FILE > /dev/null`: how fast the bytes can be read at all.
"""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.formats import get_codec

ENVELOPE = T.StructType([T.StructField("value_b64", T.StringType())])


def floor_schema(format_id: str) -> T.DataType:
    """The fixed schema of the format's JSON lines (binary formats: the `value_b64` envelope)."""
    codec = get_codec(format_id)
    return ENVELOPE if codec.binary_messages else codec.schema


def spark_floor(spark: SparkSession, format_id: str, source: Path, out: Path) -> None:
    """`read.text` + `from_json` (fixed schema) + Parquet write, one row per line."""
    parsed = F.from_json(F.col("value"), floor_schema(format_id)).alias("m")
    lines = spark.read.text(str(source))
    rows = lines.select(parsed)
    if isinstance(floor_schema(format_id), T.StructType):
        rows = rows.select("m.*")
    rows.write.mode("overwrite").parquet(str(out))


@contextmanager
def _duckdb(threads: int):
    """A DuckDB connection on `threads` threads, closed after the block."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"SET threads = {threads}")
        con.execute("SET preserve_insertion_order = false")
        con.execute("SET enable_progress_bar = false")
        yield con
    finally:
        con.close()


def _duckdb_copy(read: str, out: Path, options: str, threads: int) -> None:
    with _duckdb(threads) as con:
        con.execute(f"COPY (SELECT * FROM {read}) TO '{out}' ({options})")


def duckdb_decode(source: Path, out: Path, threads: int) -> None:
    """DuckDB `read_json` (schema detected, bad lines skipped) -> Parquet."""
    read = f"read_json('{source}', format = 'newline_delimited', ignore_errors = true)"
    _duckdb_copy(read, out, "FORMAT parquet, COMPRESSION zstd", threads)


def duckdb_encode(canonical: Path, out: Path, threads: int) -> None:
    """DuckDB canonical Parquet -> JSON lines, one object per event."""
    read = f"read_parquet('{canonical}/**/*.parquet', hive_partitioning = true)"
    _duckdb_copy(read, out, "FORMAT json", threads)


def parquet_rows(path: Path) -> int:
    """Rows of a Parquet file or folder, from its footers."""
    pattern = f"{path}/**/*.parquet" if path.is_dir() else str(path)
    with _duckdb(1) as con:
        return con.execute(f"SELECT count(*) FROM read_parquet('{pattern}')").fetchone()[0]


def text_lines(path: Path) -> int:
    """Lines of a text file."""
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def cat(source: Path) -> None:
    """`cat FILE > /dev/null`."""
    subprocess.run(["cat", str(source)], stdout=subprocess.DEVNULL, check=True)
