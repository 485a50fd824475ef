"""`dt -> version`: which versions of each table hold the state at the end of an applied day.

`_versions/` (a Delta table by `dt`) has one row per table a day applied changes to. The state of a
table at the end of day D is the row of the latest day at or before D (a day that did not touch the
table left it as it was). A backfill of day D first restores every table a day at or after D changed
to its versions of the latest day before D (version 0, the empty table, where there is none); the
later days are then applied again and replace their rows, so no row points at a version the
restore left behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from cdc_pipelines.lake import io
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots.schema import TABLE, VERSIONS_SCHEMA
from cdc_pipelines.snapshots.store import VERSIONS
from cdc_pipelines.snapshots.tables import restore


@dataclass(frozen=True)
class TableVersion:
    """One table's two Delta tables and their versions at the end of a day."""

    table: tuple
    current: str
    history: str
    current_version: int
    history_version: int
    rows: int
    dt: str

    def row(self) -> dict:
        names = dict(zip(TABLE, self.table, strict=True))
        return {**names, "current": self.current, "history": self.history, "current_version": self.current_version,
                "history_version": self.history_version, "rows": self.rows, "dt": self.dt}  # fmt: skip


def _read(spark: SparkSession, root: str | Path) -> DataFrame:
    return io.read_table(spark, join(root, VERSIONS), VERSIONS_SCHEMA)


def _entries(frame: DataFrame) -> list[TableVersion]:
    return [
        TableVersion(tuple(r[c] for c in TABLE), r["current"], r["history"], r["current_version"],
                     r["history_version"], r["rows"], r["dt"])  # fmt: skip
        for r in frame.collect()
    ]


def record(spark: SparkSession, root: str | Path, day: str, entries: list[TableVersion]) -> None:
    """The day's rows, replacing those an earlier run of the day wrote."""
    frame = spark.createDataFrame([e.row() for e in entries], VERSIONS_SCHEMA)
    io.replace_partitions(frame, join(root, VERSIONS), [{"dt": day}], ("dt",))


def as_of(spark: SparkSession, root: str | Path, day: str, before: bool = False) -> list[TableVersion]:
    """Each table's versions at the end of `day` (or, with `before`, at its start)."""
    frame = _read(spark, root)
    frame = frame.where(F.col("dt") < day) if before else frame.where(F.col("dt") <= day)
    latest = Window.partitionBy(*TABLE).orderBy(F.desc("dt"))
    return _entries(frame.withColumn("_n", F.row_number().over(latest)).where(F.col("_n") == 1).drop("_n"))


def restore_before(spark: SparkSession, root: str | Path, day: str) -> list[tuple]:
    """Restore every table changed on `day` or later to its state at the start of `day`; the tables."""
    changed = _entries(_read(spark, root).where(F.col("dt") >= day))
    earlier = {e.table: e for e in as_of(spark, root, day, before=True)}
    tables = {}
    for entry in changed:
        tables.setdefault(entry.table, entry)
    for table, entry in tables.items():
        start = earlier.get(table)
        restore(spark, entry.current, start.current_version if start else 0)
        restore(spark, entry.history, start.history_version if start else 0)
    return sorted(tables, key=lambda t: tuple(x or "" for x in t))
