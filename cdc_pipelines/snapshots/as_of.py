"""Every table's state at the end of a day, read back by version (`VERSION AS OF`, from `versions.as_of`): no
per-day copies. `cdc-pipelines snapshot --as-of D` prints the rows as JSON lines (the table in `_table`) or,
with `--export`, writes each table as Parquet. Read by Spark, or without a session by delta-rs (its DataFusion
reader takes deletion vectors and column mapping: Spark's tables too).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from cdc_pipelines.lake.io import DELTA
from cdc_pipelines.runtime.storage import local_path
from cdc_pipelines.snapshots.effects import table_label
from cdc_pipelines.snapshots.run import snapshots_root
from cdc_pipelines.snapshots.store import table_root
from cdc_pipelines.snapshots.versions import TableVersion, as_of


def _rows(spark: SparkSession | None, entry: TableVersion) -> Iterator[dict]:
    """One table's current rows at the end of the entry's day (times as naive UTC, as Spark gives them)."""
    if spark is not None:
        yield from (row.asDict() for row in _frame(spark, entry).toLocalIterator())
        return
    for batch in _local_table(entry):
        for row in batch.to_pylist():
            yield {k: v.astimezone(dt.UTC).replace(tzinfo=None) if isinstance(v, dt.datetime) and v.tzinfo else v
                   for k, v in row.items()}  # fmt: skip


def _frame(spark: SparkSession, entry: TableVersion):
    """The table at the entry's version, read by Spark."""
    return spark.read.format(DELTA).option("versionAsOf", entry.current_version).load(entry.current)


def _local_table(entry: TableVersion):
    """The table at the entry's version as a pyarrow batch stream (DataFusion's text views read as strings)."""
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(local_path(entry.current), version=entry.current_version)
    stream = pa.RecordBatchReader.from_stream(QueryBuilder().register("t", table).execute("SELECT * FROM t"))
    schema = pa.schema([f.with_type(pa.string()) if f.type == pa.string_view() else f for f in stream.schema])
    return pa.RecordBatchReader.from_batches(schema, (batch.cast(schema) for batch in stream))


def _json_value(value):
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, dt.date | dt.datetime | decimal.Decimal):
        return str(value)
    return value


def print_as_of(
    spark: SparkSession | None, lake_root: str | Path, day: str, stream: TextIO, out: str | Path | None = None
) -> dict:
    """Print every row of every table at the end of `day`; return the tables, versions and row counts."""
    tables = {}
    for entry in as_of(spark, snapshots_root(lake_root, out), day):
        rows = 0
        for row in _rows(spark, entry):
            line = {"_table": table_label(entry.table), **{k: _json_value(v) for k, v in row.items()}}
            stream.write(json.dumps(line, ensure_ascii=False) + "\n")
            rows += 1
        tables[table_label(entry.table)] = {"current": entry.current, "version": entry.current_version, "rows": rows}
    return {"dt": day, "tables": tables}


def export_as_of(
    spark: SparkSession | None, lake_root: str | Path, day: str, export: str | Path, out: str | Path | None = None
) -> dict:
    """Write every table at the end of `day` as Parquet under `export` (the snapshot root's folder layout)."""
    tables = {}
    for entry in as_of(spark, snapshots_root(lake_root, out), day):
        path = table_root(export, *entry.table)
        if spark is not None:
            _frame(spark, entry).write.mode("overwrite").parquet(path)
        else:  # one Parquet file in the folder (replaced whole), batch by batch
            local = Path(local_path(path))
            shutil.rmtree(local, ignore_errors=True)
            local.mkdir(parents=True)
            reader = _local_table(entry)
            with pq.ParquetWriter(local / "part-00000.parquet", reader.schema) as writer:
                for batch in reader:
                    writer.write_batch(batch)
        tables[table_label(entry.table)] = {"current": entry.current, "version": entry.current_version, "path": path}
    return {"dt": day, "tables": tables}
