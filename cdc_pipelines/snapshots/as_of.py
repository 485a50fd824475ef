"""Every table's state at the end of a day, read back by version (`VERSION AS OF`): no per-day copies.

The versions come from `_versions` (`versions.as_of`); a table the day did not touch is read at the
version of the last day that did. `cdc-pipelines snapshot --as-of D` prints the rows as JSON lines
(the table named in `_table`) or, with `--export`, writes each table as Parquet for tools that read
folders.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from pathlib import Path
from typing import TextIO

from pyspark.sql import DataFrame, SparkSession

from cdc_pipelines.lake.io import DELTA
from cdc_pipelines.snapshots.day import label
from cdc_pipelines.snapshots.run import snapshots_root
from cdc_pipelines.snapshots.schema import TABLE
from cdc_pipelines.snapshots.store import table_root
from cdc_pipelines.snapshots.versions import TableVersion, as_of


def state_as_of(spark: SparkSession, entry: TableVersion) -> DataFrame:
    """One table's current rows at the end of the entry's day."""
    return spark.read.format(DELTA).option("versionAsOf", entry.current_version).load(entry.current)


def _entries(spark: SparkSession, lake_root: str | Path, day: str, out: str | Path | None) -> list[TableVersion]:
    return as_of(spark, snapshots_root(lake_root, out), day)


def _name(entry: TableVersion) -> str:
    return label(dict(zip(TABLE, entry.table, strict=True)))


def _json_value(value):
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, dt.date | dt.datetime | decimal.Decimal):
        return str(value)
    return value


def print_as_of(
    spark: SparkSession, lake_root: str | Path, day: str, stream: TextIO, out: str | Path | None = None
) -> dict:
    """Print every row of every table at the end of `day`; return the tables, versions and row counts."""
    tables = {}
    for entry in _entries(spark, lake_root, day, out):
        rows = 0
        for row in state_as_of(spark, entry).toLocalIterator():
            line = {"_table": _name(entry), **{k: _json_value(v) for k, v in row.asDict().items()}}
            stream.write(json.dumps(line, ensure_ascii=False) + "\n")
            rows += 1
        tables[_name(entry)] = {"current": entry.current, "version": entry.current_version, "rows": rows}
    return {"dt": day, "tables": tables}


def export_as_of(
    spark: SparkSession, lake_root: str | Path, day: str, export: str | Path, out: str | Path | None = None
) -> dict:
    """Write every table at the end of `day` as Parquet under `export` (the snapshot root's folder layout)."""
    tables = {}
    for entry in _entries(spark, lake_root, day, out):
        path = table_root(export, *entry.table)
        state_as_of(spark, entry).write.mode("overwrite").parquet(path)
        tables[_name(entry)] = {"current": entry.current, "version": entry.current_version, "path": path}
    return {"dt": day, "tables": tables}
