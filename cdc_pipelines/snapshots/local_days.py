"""A snapshot day folded in this process: the local engine's every day, and the Spark engine's days of at
most `apply.MAX_EVENTS_SETTING` events (`run` hands them here with its session). The day is read by
delta-rs and folded with pyarrow (`apply.fold_local`), its columns typed (`values`); the tables delta-rs
writes (every one on the local engine, `small_tables.owns`) are written from the typed Arrow rows, those
Spark owns by Spark (`spark_tables`: their live keys read and their rows MERGEd, replaced or appended
from frames of their own rows).

The rules are the same modules' as Spark's own fold (`run`): the effects and their fold (`apply`), the
columns' types and the failing values (`values`), what the day does to each table and its late events
(`day`), the writes' clauses (`merges`), the day's datasets' writers (`small_tables.replace_datasets`),
restores and versions (`versions`). What is here is the order they run in. On the
local engine every table is delta-rs's, so a table Spark created, a column name that needs column mapping
or a folder name delta-rs cannot open sends the step to Spark before it starts (`unwritable`, the engine
table).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from cdc_pipelines.lake import delta_rs, io
from cdc_pipelines.lake.layout import CHANGES_DIR
from cdc_pipelines.model.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import apply, small_tables, spark_tables, values
from cdc_pipelines.snapshots.day import (
    ANOMALY_TEXT,
    TableDay,
    ddl_dataset,
    ddl_events,
    first_deliveries,
    late_events,
    rows_before,
    table_days,
    table_rows,
    touched_tables,
)
from cdc_pipelines.snapshots.day_steps import finished_day, planned_schema, prepared_tables, write_table
from cdc_pipelines.snapshots.effects import TABLE, TRUNCATE, table_text
from cdc_pipelines.snapshots.fold import ANOMALY, ANOMALY_NAMES, table_order
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, APPLIED_SCHEMA
from cdc_pipelines.snapshots.store import APPLIED, applied_days, read_day, table_paths
from cdc_pipelines.snapshots.versions import TableVersion, as_of

# the setting of the most events of one day the local engine folds (it holds the day in this process: a
# day of 1M inserts took 4.2 GiB here); past it the engine table sends the step to Spark, which folds in
# `mapInArrow`
MAX_EVENTS_SETTING = "cdc.snapshots.local_max_events"
DEFAULT_MAX_EVENTS = 2_000_000


def max_events(conf) -> int:
    """The most events of one day the local engine holds, from `conf` (the run's settings, or Spark's)."""
    return int(conf.get(MAX_EVENTS_SETTING, str(DEFAULT_MAX_EVENTS)))


# a day's change rows `unwritable` read for the engine's choice, kept for the fold of the same run to take
# (`_decoded_day`): the day is read once, not twice; (changes, day, version) -> rows, taken on use
_READ_AHEAD: dict[tuple, pa.Table | None] = {}


def _decoded_day(lake_root: str | Path, day: str, keep: bool = False) -> pa.Table | None:
    """Every column of the day's change rows (None where there is no change table): the rows `unwritable`
    kept (`keep`) when the table is still at the version they were read at, else a read."""
    changes = join(lake_root, CHANGES_DIR)
    key = (changes, day, io.table_version(None, changes))
    kept = key in _READ_AHEAD
    rows = _READ_AHEAD.pop(key) if kept else delta_rs.read_partition(changes, "dt", day, CANONICAL_COLUMNS)
    if keep:
        _READ_AHEAD.clear()
        _READ_AHEAD[key] = rows
    return rows


def day_changes(lake_root: str | Path, day: str, topics: Sequence[str] | None) -> pa.Table:
    """The day's events a snapshot applies (`day.first_deliveries`); none where the day was never decoded."""
    changes = _decoded_day(lake_root, day)
    if changes is None:
        changes = delta_rs.arrow_schema(CANONICAL_SCHEMA).empty_table().select(list(CANONICAL_COLUMNS))
    return first_deliveries(changes, topics)


def largest_day(lake_root: str | Path, dts: Sequence[str]) -> int:
    """The most events of one of the days `dts` (the changes' Delta log: no scan)."""
    counts = delta_rs.partition_counts(join(lake_root, CHANGES_DIR), "dt") or {}
    return max((counts.get(day, 0) for day in dts), default=0)


def unwritable(lake_root: str | Path, root: str, dts: Sequence[str]) -> str | None:
    """Why delta-rs cannot write the tables the days `dts` change, or those of the later days applied before
    (a backfill applies them again), or None: a table Spark created (deletion vectors, column mapping), a
    folder name delta-rs cannot open, a column name that needs column mapping."""
    for entry in as_of(None, root, "9999-12-31") if dts else ():
        if entry.dt >= min(dts):
            why = small_tables.unwritable_table(table_paths(root, entry.table))
            if why:
                return why
    for day in dts:
        rows = _decoded_day(lake_root, day, keep=len(dts) == 1)
        if rows is None:
            continue
        rows = rows.select([*TABLE, "op", "before", "after"])
        rows = rows.filter(pc.invert(pc.is_in(rows.column("op"), pa.array(["DDL", "HEARTBEAT", "TX_BEGIN", "TX_END"]))))
        names = set()
        for image in ("before", "after"):
            for chunk in rows.column(image).chunks:
                names.update(pc.unique(chunk.keys).to_pylist())
        why = small_tables.unwritable_columns(names)
        if why:
            return why
        for table in rows.select(list(TABLE)).group_by(list(TABLE)).aggregate([]).to_pylist():
            why = small_tables.unwritable_table(table_paths(root, tuple(table[c] for c in TABLE)))
            if why:
                return why
    return None


def snapshot_day(
    spark: SparkSession | None,
    lake_root: str | Path,
    root: str,
    day: str,
    topics: Sequence[str] | None,
    late: bool,
    keys: Mapping[str, Sequence[str]] | None,
    kafka_keys: Collection[str] | bool,
    restored: set[tuple],
    schema_changes: tuple,
) -> dict | None:
    """Write one day into each table it changed; record the versions, the day's anomalies and figures; the
    day's summary. `restored`: tables a backfill restored that no day since changed, at their state at the
    start of the day by a new version: not restored again; the day's tables leave the set.

    Without `spark`, the local engine's day. With it, a day the Spark engine folds here: the tables Spark
    owns have their keys read and their day written by Spark (`spark_tables`), the day's datasets are
    Spark's on a root delta-rs does not write; None, before anything is written, for a day that truncates a
    table whose keys Spark reads (every key of it would be collected here): Spark folds it (`run`)."""
    changes = day_changes(lake_root, day, topics)
    ddl, (_, dialects, _) = ddl_events(changes), schema_changes
    rows = functools.cache(functools.partial(table_rows, changes))
    schema = planned_schema(spark, root, day, ddl, schema_changes, rows, lambda: touched_tables(changes))
    previous_day = max((d for d in applied_days(spark, root) if d < day), default=None)
    effects = apply.local_effects(changes, keys, kafka_keys, schema.rewrite)
    tables, skipped = apply.local_tables(effects)
    if spark is not None and _truncates_spark_table(spark, root, effects, skipped):
        return None
    prepared_tables(spark, root, day, list(dict.fromkeys([*tables, *schema.tables])), restored, schema)
    held, live = small_tables.held_keys(root, tables)
    for table in tables if spark is None else ():
        why = None if table in held else small_tables.unwritable_table(table_paths(root, table))
        if why:  # the engine table sends such a day to Spark (`unwritable`): a lake changed since
            raise RuntimeError(f"the local engine cannot write this table: {why}")
    read = None if spark is None else spark_tables.spark_keys(spark, root, tables, held)

    def live_among(touched: set[tuple[str, str]], truncated: set[str]) -> pa.Table:
        own = apply.live_among(live, touched, truncated)
        if read is None:
            return own
        return pa.concat_tables([own, spark_tables.live_among(read, touched, truncated).cast(own.schema)])

    folded = apply.fold_local(effects, skipped, live_among, bool(schema.rewrite.routes))
    opened = apply.opened_rows(folded)
    figures = values.figure_rows(opened)
    ddl_rows, unread = ddl_dataset(ddl, day, dialects)
    events = folded.effects.filter(pc.equal(folded.effects.column("sub"), 0))
    invalid = not all(f.valid for f in figures.values())
    anomalies = _anomalies(spark, root, day, folded, opened, events if late else None, invalid,
                           pa.concat_tables([unread, schema.anomalies]))  # fmt: skip
    ids = events.select(["event_id"]).append_column("dt", pa.array([day] * events.num_rows, pa.string()))
    with ThreadPoolExecutor(max_workers=spark_tables.CONCURRENT_WRITES, thread_name_prefix="snapshot") as pool:
        datasets = pool.submit(small_tables.replace_datasets, spark, root, day, (anomalies, ids, ddl_rows),
                               events.num_rows)  # fmt: skip
        days = table_days([f.as_dict() for f in folded.figures.values()], figures, held)
        entries = _write_tables(spark, root, day, folded, days, rows_before(root, previous_day), pool)
        datasets.result()
    return finished_day(spark, root, day, schema, entries, previous_day, skipped, events.num_rows,
                        anomalies.to_pylist(), small_tables.commits_root(spark, root))  # fmt: skip


def _truncates_spark_table(spark: SparkSession, root: str, effects: pa.Table, skipped: list[dict]) -> bool:
    """Whether the day truncates a table whose current table is there and not delta-rs's (Spark reads its keys)."""
    truncates = effects.filter(pc.equal(effects.column("kind"), TRUNCATE)).select(list(TABLE)).to_pylist()
    gone = {tuple(s[c] for c in TABLE) for s in skipped}
    truncated = {tuple(r[c] for c in TABLE) for r in truncates} - gone
    paths = [table_paths(root, table).current for table in sorted(truncated, key=table_order)]
    return any(small_tables.column_plans(path) is None and io.is_table(spark, path) for path in paths)


def _write_tables(
    spark: SparkSession | None, root: str, day: str, folded: apply.LocalFold, days: list[TableDay],
    before: Mapping[tuple, int], pool: ThreadPoolExecutor,
) -> list[TableVersion]:  # fmt: skip
    """Each changed table's day, the tables side by side in `pool`; the versions they made (in table order).
    delta-rs's tables (every one on the local engine) from the fold's rows typed here (`small_tables.day_rows`),
    Spark's from frames of their own rows; on Spark, a day of more rows than the driver holds
    (`local_days.MAX_EVENTS_SETTING`) has Spark write every table (`small_tables.delta_rs_columns`)."""
    held = spark is None or sum(d.sets + d.opened + d.live for d in days) <= max_events(spark.conf)
    columns = pool.map(lambda d: small_tables.delta_rs_columns(spark, root, d, held), days)
    plans = dict(zip([d.table for d in days], columns, strict=True))
    typed = small_tables.day_rows(folded.folded, {t: columns for t, columns in plans.items() if columns is not None})
    writes = []
    for d in days:
        if plans[d.table] is not None:
            writes.append(pool.submit(write_table, root, day, d, typed[d.table], plans[d.table], before))
            continue
        own = folded.folded.filter(pc.equal(folded.folded.column("_t"), table_text(d.table)))
        frames = apply.fold_frames(apply.local_frame(spark, own))
        writes.append(pool.submit(spark_tables.write_table, spark, root, day, d, frames["net"], frames["opened"],
                                  frames["closed"], before))  # fmt: skip
    return [w.result() for w in writes]


def _anomalies(
    spark: SparkSession | None, root: str, day: str, folded: apply.LocalFold, opened: pa.Table,
    late: pa.Table | None, invalid: bool, unread: pa.Table,
) -> pa.Table:  # fmt: skip
    """The fold's anomalies, the values failing their type (looked for only where the day has some:
    `invalid`), on a late day those of its events applied (`late`) that a run of it before did not apply
    (`day.late_events`), and the DDL not read (`unread`)."""
    rows = folded.folded.filter(pc.equal(folded.folded.column("_out"), ANOMALY))
    parts = [rows.rename_columns([ANOMALY_NAMES.get(c, c) for c in rows.column_names]), unread]
    if invalid:
        parts.append(values.invalid_cells(opened))
    if late is not None:
        parts.append(late_events(late, _applied_before(spark, root, day)))
    rows = pa.concat_tables([p.select(list(ANOMALY_COLUMNS)).cast(ANOMALY_TEXT) for p in parts])
    return rows.append_column("dt", pa.array([day] * rows.num_rows, pa.string()))


def _applied_before(spark: SparkSession | None, root: str, day: str) -> pa.Table | None:
    """The event ids an earlier run of the day applied (None where there is no `_applied` yet): read by
    delta-rs on a local root, else by Spark."""
    folder = join(root, APPLIED)
    if spark is None or delta_rs.local_table_path(folder) is not None:
        return delta_rs.read_partition(folder, "dt", day, ["event_id"])
    return read_day(spark, folder, APPLIED_SCHEMA, day).select("event_id").toArrow()
