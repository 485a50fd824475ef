"""Flink's canal-json decode of one file into Parquet, timed beside our canal decode; run through scripts/bench-flink.

Usage (from .venv-flink): bench_flink.py INPUT OUT_DIR JAR...

The job, in PyFlink's Table API with no Python code in the pipeline (source, function and sink all run in
the JVM):
    filesystem source, 'format' = 'canal-json', 'canal-json.ignore-parse-errors' = 'true'
    -> TO_CHANGELOG (Flink's built-in process table function, new in 2.3): each change row becomes an
       insert-only row with an `op` column (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE)
    -> filesystem sink, 'format' = 'parquet' (snappy), into OUT_DIR; parallelism 2.

Schema: one table whose columns are the union of the columns of the bench generator's three tables
(cdc_pipelines/demo/extracts.py TABLES: shop.orders, shop.order_items, crm.customers), all STRING, plus `op`.
One source reads the file once, as our decode and Spark's floor (`read.schema(S).json` + explode + Parquet)
do; one source per table with 'canal-json.table.include' would read and parse the whole file three times.
A row's columns of the other tables are null.

Why not what the issue asked for, and other ways the comparison is unequal:
- Streaming mode, not batch: Flink's planner rejects a changelog source in batch mode ("Querying a table in
  batch mode is currently only possible for INSERT-only table sources"). The file source is bounded, so the
  job ends at the end of the file, and the Parquet files are committed then (no checkpoints needed).
- Parquet's sink takes inserts only, hence TO_CHANGELOG (which also keeps the op, as Spark's floor keeps `type`).
- Rows: +I per inserted row, a -U/+U pair per updated row (before image = `data` overlaid with `old`, as ours),
  -D per deleted row. So Flink writes INSERT + 2 x UPDATE + DELETE rows, where our decode writes one event per
  row (before and after images in one row) and the floor one row per `data` entry (plus a row for each DDL
  message and each non-empty malformed line).
- Dropped silently: DDL messages (canal type QUERY, isDdl true), malformed lines, and everything but the
  row values: the filesystem source exposes no canal metadata (database, table, es, ts, pkNames, sqlType,
  mysqlType all unavailable), so a row does not say which table it is from. No redelivery marking, no
  rejects, no type mapping, no partitioning by day.
- A fixed schema: a column not declared here is dropped; a new table or column needs the DDL changed.
- Numbers are read as doubles: 0.10 becomes "0.1", 12345678901234567890.123456789 becomes
  "1.2345678901234567E19" (ours and the floor keep the text).
- One local file is one split: Flink's local file system reports a file as one block, so one task parses
  the whole file and writes one Parquet file; the second slot stays idle. Spark splits the same file over
  both cores. (A directory of several files as INPUT would be read in parallel.)
"""

from __future__ import annotations

import os
import sys
import time

T0 = time.monotonic()

COLUMNS = (
    # shop.orders
    "order_id", "customer", "amount", "placed_at", "note",
    # shop.order_items (and order_id)
    "line_no", "sku", "qty", "price",
    # crm.customers
    "customer_id", "name", "vip", "photo", "born",
)  # fmt: skip
PARALLELISM = 2


def _sql_path(path: str) -> str:
    return path.replace("'", "''")


def run(source: str, out: str, jars: list[str]) -> float:
    """Run the job; return the seconds from this process's start to the job's end."""
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("parallelism.default", str(PARALLELISM))
    config.set("pipeline.jars", ";".join(f"file://{jar}" for jar in jars))
    config.set("pipeline.name", "bench-flink canal-json -> parquet")
    columns = ", ".join(f"`{c}` STRING" for c in COLUMNS)
    env.execute_sql(
        f"CREATE TABLE canal ({columns}) WITH ('connector' = 'filesystem', 'path' = '{_sql_path(source)}', "
        "'format' = 'canal-json', 'canal-json.ignore-parse-errors' = 'true')"
    )
    env.execute_sql(
        f"CREATE TABLE rows_out (op STRING, {columns}) WITH ('connector' = 'filesystem', "
        f"'path' = '{_sql_path(out)}', 'format' = 'parquet')"
    )
    env.execute_sql("INSERT INTO rows_out SELECT * FROM TO_CHANGELOG(input => TABLE canal)").wait()
    return time.monotonic() - T0


def parquet_files(out: str) -> list[str]:
    """The committed part files (in-progress ones are hidden, with a leading dot)."""
    return sorted(os.path.join(out, f) for f in os.listdir(out) if not f.startswith((".", "_")))


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    source, out, jars = sys.argv[1], sys.argv[2], sys.argv[3:]
    if os.path.isdir(out) and os.listdir(out):
        print(f"bench-flink: {out} is not empty; remove it first", file=sys.stderr)
        return 2
    wall = run(source, out, jars)

    import pyarrow.parquet as pq

    files = parquet_files(out)
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    print(f"rows written: {rows} ({len(files)} Parquet files in {out})")
    if os.environ.get("BENCH_FLINK_OPS"):
        ops: dict[str, int] = {}
        for f in files:
            for op in pq.read_table(f, columns=["op"]).column("op").to_pylist():
                ops[op] = ops.get(op, 0) + 1
        print("rows by op:", ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    print(f"wall seconds (process start to job end): {wall:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
