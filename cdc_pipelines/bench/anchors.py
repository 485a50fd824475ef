"""What a user could run instead, on the same bytes: the anchors our decode and encode are held to.

- the Spark floor of decode: Spark's JSON file reader with the format's fixed schema
  (`read.schema(S).json`, string leaves, canal rows exploded) + Parquet write, no normalisation:
  the fastest bare Spark path (no Spark design of this conversion can do less work); and, as a
  second row, `read.text` + `from_json` + Parquet;
- the fastavro floor of DTS Avro decode: base64 + `schemaless_reader` alone, one process per core;
- the Spark floor of encode: the canonical Parquet + `to_json` of every row + a text write;
- DuckDB: `read_json` -> Parquet, and for encode Parquet -> JSON lines, the embedded engine a user
  might pick instead (lossy on numbers, see docs/concepts.md, 'How values stay exact', and without any CDC semantics);
- `cat FILE > /dev/null`: how fast the bytes can be read at all.
"""

from __future__ import annotations

import base64
import subprocess
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.lake.layout import CHANGES_DIR
from cdc_pipelines.model.schema import CANONICAL_COLUMNS

_TEXT_MAP = "map<string,string>"
# each bench format's messages as Spark reads them with string leaves (binary formats: the envelope)
FLOOR_SCHEMAS = {
    "oms-canal": (
        f"database string, table string, type string, isDdl string, es string, ts string, sql string, "
        f"pkNames array<string>, sqlType {_TEXT_MAP}, mysqlType {_TEXT_MAP}, data array<{_TEXT_MAP}>, "
        f"old array<{_TEXT_MAP}>, id string, gtid string, serverId string"
    ),
    "oms-default": f"allMetaData {_TEXT_MAP}, prevStruct {_TEXT_MAP}, postStruct {_TEXT_MAP}, recordType string",
    "dataworks-json": (
        f"version string, schema struct<dataColumn: array<struct<name: string, type: string>>, "
        f"primaryKey: array<string>, source: {_TEXT_MAP}>, payload struct<before: struct<dataColumn: {_TEXT_MAP}>, "
        f"after: struct<dataColumn: {_TEXT_MAP}>, sequenceId: string, scn: string, op: string, "
        f"timestamp: {_TEXT_MAP}, ddl: struct<text: string, ddlMeta: string>>"
    ),
    "oms-debezium": (
        "schema struct<name: string, fields: array<struct<field: string, type: string, name: string, "
        f"fields: array<struct<field: string, type: string, name: string, parameters: {_TEXT_MAP}>>>>>, "
        f"payload struct<op: string, source: {_TEXT_MAP}, before: {_TEXT_MAP}, after: {_TEXT_MAP}, "
        f"ts_ms: string, ts_us: string, ts_ns: string, transaction: {_TEXT_MAP}>"
    ),
    "dts-avro": "value_b64 string",
}
# formats whose message carries several rows: the floor writes one row per row, as our decode does
FLOOR_ROWS = {"oms-canal": "data"}


def spark_floor(spark: SparkSession, format_id: str, source: Path, out: Path) -> None:
    """Spark's JSON file reader (fixed schema) + Parquet write, one row per row of a message."""
    rows = spark.read.schema(FLOOR_SCHEMAS[format_id]).json(str(source))
    if format_id in FLOOR_ROWS:
        rows = rows.select("*", F.explode_outer(FLOOR_ROWS[format_id]).alias("row")).drop(FLOOR_ROWS[format_id])
    rows.write.mode("overwrite").parquet(str(out))


def spark_text_floor(spark: SparkSession, format_id: str, source: Path, out: Path) -> None:
    """`read.text` + `from_json` (fixed schema) + Parquet write, one row per line."""
    parsed = F.from_json(F.col("value"), FLOOR_SCHEMAS[format_id]).alias("m")
    spark.read.text(str(source)).select(parsed).select("m.*").write.mode("overwrite").parquet(str(out))


def encode_floor(spark: SparkSession, changes: Path, out: Path) -> None:
    """The canonical table -> `to_json` of every row -> text files: encoding without any format logic."""
    events = spark.read.parquet(str(changes))
    events.select(F.to_json(F.struct(*CANONICAL_COLUMNS)).alias("value")).write.mode("overwrite").text(str(out))


def _fastavro_share(source: str, part: int, parts: int) -> int:
    """Decode every `parts`-th line from `part` of a `value_b64` file with fastavro; records read."""
    import orjson

    from cdc_pipelines.formats.dts_avro_records import read_record

    count = 0
    with open(source, "rb") as handle:
        for number, line in enumerate(handle):
            if number % parts != part:
                continue
            try:
                read_record(base64.b64decode(orjson.loads(line)["value_b64"]))
                count += 1
            except Exception:  # noqa: BLE001, S112 - malformed lines are part of the input; the floor skips them
                continue
    return count


def fastavro_floor(source: Path, processes: int) -> int:
    """DTS Avro records of a `value_b64` file decoded by fastavro alone, one process per core."""
    with ProcessPoolExecutor(processes) as pool:
        return sum(pool.map(_fastavro_share, [str(source)] * processes, range(processes), [processes] * processes))


def warm_up(spark: SparkSession, source: Path, format_id: str, scratch: Path) -> None:
    """One untimed pass of the paths the timed steps take (JVM class loading and JIT, Python workers
    started with the codecs imported), so the first timed step of either side does not pay for them:
    the floor's reader and writer, and our decode and encode of the file's first 20,000 lines."""
    from cdc_pipelines.decode.runner import decode_files, write_decoded
    from cdc_pipelines.encode.runner import encode_events, write_encoded
    from cdc_pipelines.lake.io import read_canonical

    spark.range(2_000_000).selectExpr("sum(id)").collect()
    spark.read.schema(FLOOR_SCHEMAS[format_id]).json(str(source)).limit(20000).write.mode("overwrite").parquet(
        str(scratch / "floor")
    )
    head = scratch / "head" / "part-0.jsonl"
    head.parent.mkdir(parents=True, exist_ok=True)
    with open(source, "rb") as lines, open(head, "wb") as out:
        out.writelines(islice(lines, 20000))
    write_decoded(decode_files(spark, format_id, [head], topic="warm", dt="2024-01-01"), scratch / "lake")
    events = read_canonical(spark, scratch / "lake" / CHANGES_DIR)
    write_encoded(encode_events(events, format_id), scratch / "encoded", format_id)


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
