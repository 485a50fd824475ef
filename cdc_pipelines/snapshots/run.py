"""Snapshots of a range of days: each day applied to the one before it, written, and summarised.

Days are applied in order, each from the previous applied day's state as written to disk (so no
day's plan grows with the days before it). A backfill of an old day re-applies every later day that
was already applied, in order, so later snapshots never miss its changes; the old day's events that
were not among those it applied before are `late_event` anomalies (they arrived after a later day
was applied), while a plain rerun of the same events is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import storage
from cdc_pipelines.lake import io
from cdc_pipelines.pipeline import CHANGES_DIR
from cdc_pipelines.snapshots.apply import apply_day
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, ANOMALY_SCHEMA, DDL_COLUMNS, STATE_SCHEMA, TABLE
from cdc_pipelines.snapshots.store import (
    ANOMALIES,
    APPLIED,
    DDL,
    SNAPSHOTS_DIR,
    STATE,
    applied_days,
    read_day,
    table_root,
    table_roots,
    write_summary,
)
from cdc_pipelines.snapshots.typed import ColumnPlan, column_figures, invalid_cells, spark_type, typed_table
from cdc_pipelines.storage import join

_IDS = T.StructType([T.StructField("event_id", T.StringType()), T.StructField("dt", T.StringType())])


def snapshots_root(lake_root: str | Path, out: str | Path | None = None) -> Path:
    return Path(out) if out else Path(lake_root) / SNAPSHOTS_DIR


def snapshot_days(
    spark: SparkSession,
    lake_root: str | Path,
    dts: Sequence[str],
    out: str | Path | None = None,
    topics: Sequence[str] | None = None,
) -> dict[str, dict]:
    """Apply the days `dts` (and every later day already applied) of `topics` (all when None).

    Returns each applied day's summary (see `snapshot_day`), in order.
    """
    root = snapshots_root(lake_root, out)
    before = applied_days(root)
    days = sorted(set(dts) | {d for d in before if dts and d > min(dts)})
    return {day: snapshot_day(spark, lake_root, root, day, topics, late=any(d > day for d in before)) for day in days}


def day_changes(spark: SparkSession, lake_root: str | Path, day: str, topics: Sequence[str] | None) -> DataFrame:
    """The canonical events of `day` (none when the day was never decoded)."""
    events = io.read_canonical(spark, join(lake_root, CHANGES_DIR)).where(F.col("dt") == day)
    return events if topics is None else events.where(F.col("source_topic").isin(list(topics)))


def snapshot_day(
    spark: SparkSession, lake_root: str | Path, root: Path, day: str, topics: Sequence[str] | None, late: bool
) -> dict:
    """Apply one day to the latest applied day before it; write the snapshot and its datasets."""
    changes = day_changes(spark, lake_root, day, topics)
    previous_day = max((d for d in applied_days(root) if d < day), default=None)
    previous = read_day(spark, root / STATE, STATE_SCHEMA, previous_day).drop("dt")
    result = apply_day(previous, changes)
    anomalies = result.anomalies
    if late:
        anomalies = anomalies.unionByName(_late_events(result.events, read_day(spark, root / APPLIED, _IDS, day)))
    one_day = [{"dt": day}]
    io.replace_partitions(result.state.withColumn("dt", F.lit(day)), str(root / STATE), one_day, ("dt",))
    state = read_day(spark, root / STATE, STATE_SCHEMA, day)  # the fold runs once, not once per table
    rows = _write_tables(state, root, day)
    anomalies = anomalies.unionByName(invalid_cells(state)).select(*ANOMALY_COLUMNS).withColumn("dt", F.lit(day))
    io.replace_partitions(anomalies, str(root / ANOMALIES), one_day, ("dt",))
    io.replace_partitions(result.events.select("event_id", "dt"), str(root / APPLIED), one_day, ("dt",))
    ddl = changes.where(F.col("op") == "DDL").select(*DDL_COLUMNS, "dt")
    io.replace_partitions(ddl, str(root / DDL), one_day, ("dt",))
    summary = _summary(spark, root, day, previous_day, rows, result.skipped, applied=result.events.count())
    write_summary(root, day, summary)
    return summary


def _late_events(events: DataFrame, applied_before: DataFrame) -> DataFrame:
    return events.join(applied_before.select("event_id"), "event_id", "left_anti").select(
        *TABLE, F.lit("late_event").alias("kind"), "event_id", "op",
        F.lit("arrived after a later day was applied").alias("detail"),
    )  # fmt: skip


def _label(table: dict) -> str:
    return ".".join(str(table[c]) for c in TABLE if table[c] is not None)


def _write_tables(state: DataFrame, root: Path, day: str) -> dict[tuple, int]:
    """Each table's typed snapshot of `day`; a table no longer in the state loses its `day` partition."""
    tables = {
        tuple(r[c] for c in TABLE): (list(r["pk_columns"] or []), r["rows"])
        for r in state.groupBy(*TABLE).agg(F.first("pk_columns").alias("pk_columns"), F.count("*").alias("rows"))
        .collect()
    }  # fmt: skip
    plans: dict[tuple, list[ColumnPlan]] = {t: [] for t in tables}
    for figures in column_figures(state).collect():  # one row per table and column
        plans[tuple(figures[c] for c in TABLE)].append(ColumnPlan(figures["column"], spark_type(figures)))
    written = set()
    for table, (pk_columns, _) in tables.items():
        match = F.lit(True)
        for column, value in zip(TABLE, table, strict=True):
            match = match & F.col(column).eqNullSafe(F.lit(value).cast("string"))
        folder = table_root(root, *table)
        written.add(folder)
        typed = typed_table(state.where(match), plans[table], pk_columns)
        io.overwrite_file_partitions(typed, str(folder), [{"dt": day}], ("dt",))
    for folder in table_roots(root):
        if folder not in written:
            storage.delete(state.sparkSession, str(folder / f"dt={day}"))
    return {t: rows for t, (_, rows) in tables.items()}


def _summary(
    spark: SparkSession, root: Path, day: str, previous_day: str | None, rows: dict, skipped: list, applied: int
) -> dict:
    anomalies = read_day(spark, root / ANOMALIES, ANOMALY_SCHEMA, day)
    counts: dict[tuple, dict[str, int]] = {}
    for r in anomalies.groupBy(*TABLE, "kind").count().collect():  # one row per table and kind
        counts.setdefault(tuple(r[c] for c in TABLE), {})[r["kind"]] = r["count"]
    tables = {}
    for table in sorted(set(rows) | set(counts), key=lambda t: tuple(x or "" for x in t)):
        names = dict(zip(TABLE, table, strict=True))
        tables[_label(names)] = {**names, "rows": rows.get(table, 0), "anomalies": counts.get(table, {})}
    return {
        "dt": day,
        "previous_dt": previous_day,
        "tables": len(rows),
        "rows": sum(rows.values()),
        "applied": applied,
        "anomalies": sum(sum(k.values()) for k in counts.values()),
        "skipped_tables": [{"table": _label(s), **s} for s in skipped],
        "per_table": tables,
        "path": str(root),
    }
