"""Where snapshots live under `lake/snapshots/`, and the small reads and writes of its datasets:
`db=<db>/[schema=<db_schema>/]table=<table>/current/` and `history/` (each source table's two Delta tables);
`_versions/` (per table and applied day, the versions it produced), `_anomalies/`, `_ddl/`, `_applied/` (the
event ids each day applied), Delta tables by `dt`; `_runs/dt=<day>/summary.json`, written last: the day is
applied. Folder names are escaped as Spark escapes partition values. The root is a local path or any URI
Hadoop reaches; a local root's small days are committed by delta-rs (`replace_day`, `small_tables`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.lake import delta_rs, io
from cdc_pipelines.lake.io import is_table
from cdc_pipelines.lake.partition_paths import escape_value
from cdc_pipelines.runtime import storage
from cdc_pipelines.runtime.session import active_spark
from cdc_pipelines.snapshots.apply import local_frame
from cdc_pipelines.snapshots.tables import TablePaths

VERSIONS, ANOMALIES, DDL, APPLIED, RUNS = "_versions", "_anomalies", "_ddl", "_applied", "_runs"
CURRENT, HISTORY = "current", "history"
SUMMARY = "summary.json"


def table_root(root: str | Path, db: str | None, db_schema: str | None, table: str | None) -> str:
    """The folder holding one table's `current/` and `history/` (a `schema=` level only where the source has one)."""
    parts = [f"db={escape_value(db)}"]
    if db_schema is not None:
        parts.append(f"schema={escape_value(db_schema)}")
    return storage.join(root, *parts, f"table={escape_value(table)}")


def table_paths(root: str | Path, table: tuple) -> TablePaths:
    """One source table's current and history tables under the snapshot root `root`."""
    folder = table_root(root, *table)
    return TablePaths(storage.join(folder, CURRENT), storage.join(folder, HISTORY))


def read_day(spark: SparkSession, folder: str, schema: T.StructType, day: str | None) -> DataFrame:
    """The `dt=day` partition of a dataset (empty when the day or the dataset is missing)."""
    fields = T.StructType([f for f in schema.fields if f.name != "dt"])
    if day is None or not is_table(spark, folder):
        return spark.createDataFrame([], fields).withColumn("dt", F.lit(day).cast("string"))
    frame = spark.read.format("delta").load(folder).where(F.col("dt") == day)
    return frame.select(*[F.col(f.name).cast(f.dataType) for f in fields]).withColumn("dt", F.lit(day))


def replace_day(
    frame: DataFrame, folder: str, day: str, max_rows: int, schema: T.StructType | None = None
) -> list[dict] | None:
    """Replace the `dt=day` partition of a dataset with `frame`'s rows (all of that day): up to `max_rows` (a small
    day of a local lake; 0: none) collected, committed by delta-rs (tens of milliseconds against a Spark write's
    2-3 s) and returned; else written by Spark (the collect stops one row past `max_rows`)."""
    schema = schema or frame.schema
    frame = frame.select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])
    rows = frame.limit(max_rows + 1).toArrow() if max_rows > 0 else None
    if rows is None or rows.num_rows > max_rows:
        io.replace_partitions(frame, folder, [{"dt": day}], ("dt",), schema=schema)
        return None
    replace_local_day(rows, folder, day, schema)
    return rows.to_pylist()


def replace_local_day(
    rows: pa.Table, folder: str, day: str, schema: T.StructType, spark: SparkSession | None = None
) -> None:
    """`replace_day` of a dataset's rows held here: by delta-rs (a local dataset), or by Spark where given `spark`."""
    if spark is not None:
        io.replace_partitions(local_frame(spark, rows, schema), folder, [{"dt": day}], ("dt",), schema=schema)
        return
    delta_rs.replace_partitions(rows, delta_rs.local_table_path(folder), [{"dt": day}], schema, ("dt",))


def _summary_path(root: str | Path, day: str) -> str:
    return storage.join(root, RUNS, f"dt={day}", SUMMARY)


def applied_days(spark: SparkSession | None, root: str | Path) -> list[str]:
    """Days whose snapshot was written to the end (their summary exists), in order: one listing (without a
    `spark` session, of a local root)."""
    runs = storage.join(root, RUNS)
    if spark is None:
        local = storage.local_path(runs)
        names = os.listdir(local) if os.path.isdir(local) else []
        days = [n for n in names if os.path.isfile(os.path.join(local, n, SUMMARY))]
    elif not storage.exists(spark, runs):
        return []
    else:
        days = [name.rsplit("/", 2)[-2] for name in storage.list_files(spark, runs) if name.endswith(f"/{SUMMARY}")]
    return sorted(d.removeprefix("dt=") for d in days if d.startswith("dt="))


def write_summary(spark: SparkSession | None, root: str | Path, day: str, summary: dict) -> None:
    """The day's summary, whole or not at all (it marks the day as applied); without a `spark` session, to
    a local root."""
    text = json.dumps(summary, indent=1, default=str).encode()
    path = _summary_path(root, day)
    if spark is not None:
        storage.replace_bytes(spark, path, text)
        return
    local = Path(storage.local_path(path))
    local.parent.mkdir(parents=True, exist_ok=True)
    hidden = local.with_name(f".{local.name}.tmp")
    hidden.write_bytes(text)
    os.replace(hidden, local)


def read_summary(root: str | Path, day: str) -> dict | None:
    """The day's summary, or None. A local root is read without Spark (the asset check has none);
    any other through Hadoop, in the process's session."""
    path = _summary_path(root, day)
    local = storage.local_path(path)
    if local is not None:
        return json.loads(Path(local).read_text()) if os.path.isfile(local) else None
    spark = active_spark()
    return json.loads(storage.read_bytes(spark, path)) if storage.exists(spark, path) else None
