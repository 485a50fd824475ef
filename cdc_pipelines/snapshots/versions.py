"""`dt -> version`: which versions of each table hold the state at the end of an applied day.

`_versions/` (Delta, by `dt`) has a row per table a day changed; a table's state at the end of day D is the
row of the latest day at or before D. A backfill of D first restores every table a day at or after D changed
to its versions of the latest day before D (version 0, empty, where there is none); the later days are then
applied again and replace their rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

from cdc_pipelines.lake import delta_rs, io
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import small_tables
from cdc_pipelines.snapshots.fold import table_order
from cdc_pipelines.snapshots.schema import TABLE, VERSIONS_SCHEMA
from cdc_pipelines.snapshots.store import VERSIONS, replace_local_day, table_paths
from cdc_pipelines.snapshots.tables import TablePaths, restore


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
        return dict(zip(TABLE, self.table, strict=True)) | {k: v for k, v in asdict(self).items() if k != "table"}


def _rows(spark: SparkSession | None, root: str | Path) -> list[dict]:
    """Every row of `_versions/` (one per table and applied day: a few thousand rows a year for ten tables,
    a table's metadata, not its data), by delta-rs where it is local."""
    path = join(root, VERSIONS)
    if delta_rs.local_table_path(path) is not None:
        return delta_rs.read_rows(path)
    return [r.asDict() for r in io.read_table(spark, path, VERSIONS_SCHEMA).collect()]


def _entry(r: dict, root: str | Path) -> TableVersion:
    """A `_versions` row, its tables found under `root` rather than at the paths it recorded: a lake copied
    or moved elsewhere reads and restores its own tables, not the ones it was copied from."""
    table = tuple(r[c] for c in TABLE)
    paths = table_paths(root, table)
    return TableVersion(table, paths.current, paths.history, r["current_version"], r["history_version"], r["rows"],
                        r["dt"])  # fmt: skip


def record(
    spark: SparkSession | None, root: str | Path, day: str, entries: list[TableVersion], local: bool = False
) -> None:
    """The day's rows, replacing those an earlier run of the day wrote (by delta-rs when `local`, or without
    a `spark` session: the local engine)."""
    rows = [e.row() for e in entries]
    path = join(root, VERSIONS)
    if local or spark is None:
        replace_local_day(pa.Table.from_pylist(rows, schema=delta_rs.arrow_schema(VERSIONS_SCHEMA)), path, day,
                          VERSIONS_SCHEMA)  # fmt: skip
        return
    io.replace_partitions(spark.createDataFrame(rows, VERSIONS_SCHEMA), path, [{"dt": day}], ("dt",))


def as_of(spark: SparkSession | None, root: str | Path, day: str, before: bool = False) -> list[TableVersion]:
    """Each table's versions at the end of `day` (or, with `before`, at its start): its row of the latest
    applied day at or before `day` (before `day`)."""
    latest: dict[tuple, dict] = {}
    for r in _rows(spark, root):
        table = tuple(r[c] for c in TABLE)
        if (r["dt"] < day if before else r["dt"] <= day) and (table not in latest or r["dt"] > latest[table]["dt"]):
            latest[table] = r
    return [_entry(latest[t], root) for t in sorted(latest, key=table_order)]


def restore_before(spark: SparkSession | None, root: str | Path, day: str) -> list[tuple]:
    """Restore every table changed on `day` or later (its tables under `root`: `_entry`) to its state at
    the start of `day`; the tables."""
    tables = {tuple(r[c] for c in TABLE) for r in _rows(spark, root) if r["dt"] >= day}
    earlier = {e.table: e for e in as_of(spark, root, day, before=True)}
    targets = []
    for table in tables:
        start, paths = earlier.get(table), table_paths(root, table)
        targets += [(paths.current, start.current_version if start else 0),
                    (paths.history, start.history_version if start else 0)]  # fmt: skip
    _restore(spark, targets)
    return sorted(tables, key=table_order)


def restore_unfinished(
    spark: SparkSession | None, root: str | Path, day: str, tables: Mapping[tuple, TablePaths]
) -> list:
    """Restore the tables (of `tables`: the day's) that an unfinished run of `day` changed to their state at the
    start of `day`; the tables. Such a run left no summary, so its MERGEs would apply again. Told by either
    table's version past the one recorded (or 0): Spark commits no empty append, so one table may commit where
    the other does not. A table a backfill just restored is past it too, and is restored again alike."""
    start = {e.table: e for e in as_of(spark, root, day, before=True)}
    targets, undone = [], []
    for table, paths in tables.items():
        entry = start.get(table)
        recorded = (entry.current_version, entry.history_version) if entry else (0, 0)
        versions = (io.table_version(spark, paths.current), io.table_version(spark, paths.history))
        if any(v is not None and v > r for v, r in zip(versions, recorded, strict=True)):
            undone.append(table)
            targets += [(p, r) for p, v, r in zip((paths.current, paths.history), versions, recorded, strict=True)
                        if v is not None]  # fmt: skip
    _restore(spark, targets)
    return undone


def version_at_end(spark: SparkSession | None, root: str | Path, day: str, table: tuple, rows: int | None = None
                   ) -> TableVersion:  # fmt: skip
    """A table's versions at the end of `day` after its writes or a change besides them (`schema_day`), and
    its rows (`rows`, or, where a restore left them unknown, counted: from delta-rs's statistics, else by
    Spark)."""
    paths = table_paths(root, table)
    current = io.table_version(spark, paths.current)
    rows = small_tables.rows_of(paths.current) if rows is None else rows
    if rows is None and spark is not None and current is not None:
        rows = spark.read.format(io.DELTA).load(paths.current).count()
    return TableVersion(table, paths.current, paths.history, current, io.table_version(spark, paths.history),
                        rows or 0, day)  # fmt: skip


def _restore(spark: SparkSession | None, targets: list[tuple[str, int]]) -> None:
    """Each `(path, version)`: delta-rs restores the tables it wrote; Spark the others, side by side (each
    RESTORE is a few small jobs). Without a `spark` session (the local engine) every table is delta-rs's."""
    sparks = [(path, version) for path, version in targets if not small_tables.restore(path, version)]
    if sparks and spark is None:
        raise RuntimeError(f"tables only Spark restores (Spark created them): {[p for p, _ in sparks]}")
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="restore") as pool:
        list(pool.map(lambda target: restore(spark, *target), sparks))
