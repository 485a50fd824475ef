"""One snapshot day on the local engine: the fold, the typing and the writes of `run`'s day, read and
committed by delta-rs in this process, no JVM.

The rules are the same modules' as on Spark: the effects and their fold (`apply.fold_local`), the columns'
types and the failing values (`values`), what the day does to each table (`day`), the writes' clauses
(`small_tables.write_day`), restores and versions (`versions`). What is here is the order they run in.
Every table is delta-rs's, so a table Spark created, a column name that needs column mapping or a folder
name delta-rs cannot open sends the step to Spark before it starts (`unwritable`, the engine table).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.layout import CHANGES_DIR
from cdc_pipelines.model.schema import CANONICAL_COLUMNS, CANONICAL_SCHEMA
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import apply, small_tables, values
from cdc_pipelines.snapshots.day import (
    ANOMALY_TEXT,
    ddl_dataset,
    ddl_events,
    first_deliveries,
    rows_before,
    table_days,
    table_rows,
    touched_tables,
)
from cdc_pipelines.snapshots.day_steps import finished_day, planned_schema, prepared_tables, write_table
from cdc_pipelines.snapshots.effects import TABLE, table_text
from cdc_pipelines.snapshots.fold import ANOMALY, ANOMALY_NAMES
from cdc_pipelines.snapshots.schema import (
    ANOMALY_COLUMNS,
    ANOMALY_SCHEMA,
    APPLIED_SCHEMA,
    DDL_SCHEMA,
    LATE_DETAIL,
    LATE_EVENT,
)
from cdc_pipelines.snapshots.store import ANOMALIES, APPLIED, DDL, applied_days, replace_local_day, table_paths
from cdc_pipelines.snapshots.versions import as_of

# the setting of the most events of one day the local engine folds (it holds the day in this process: a
# day of 1M inserts took 4.2 GiB here); past it the engine table sends the step to Spark, which folds in
# `mapInArrow`
MAX_EVENTS_SETTING = "cdc.snapshots.local_max_events"
DEFAULT_MAX_EVENTS = 2_000_000


def max_events(conf) -> int:
    """The most events of one day the local engine holds, from `conf` (the run's settings, or Spark's)."""
    return int(conf.get(MAX_EVENTS_SETTING, str(DEFAULT_MAX_EVENTS)))


def day_changes(lake_root: str | Path, day: str, topics: Sequence[str] | None) -> pa.Table:
    """The day's events a snapshot applies (`day.first_deliveries`); none where the day was never decoded."""
    changes = delta_rs.read_partition(join(lake_root, CHANGES_DIR), "dt", day, CANONICAL_COLUMNS)
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
    changes = join(lake_root, CHANGES_DIR)
    for entry in as_of(None, root, "9999-12-31") if dts else ():
        if entry.dt >= min(dts):
            why = small_tables.unwritable_table(table_paths(root, entry.table))
            if why:
                return why
    for day in dts:
        rows = delta_rs.read_partition(changes, "dt", day, [*TABLE, "op", "before", "after"])
        if rows is None:
            continue
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
    lake_root: str | Path,
    root: str,
    day: str,
    topics: Sequence[str] | None,
    late: bool,
    keys: Mapping[str, Sequence[str]] | None,
    kafka_keys: Collection[str] | bool,
    restored: set[tuple],
    schema_changes: tuple,
) -> dict:
    """`run.snapshot_day` on the local engine: write one day into each table it changed; record the
    versions, the day's anomalies and figures; the day's summary."""
    changes = day_changes(lake_root, day, topics)
    ddl, (_, dialects, _) = ddl_events(changes), schema_changes
    rows = functools.cache(functools.partial(table_rows, changes))
    schema = planned_schema(None, root, day, ddl, schema_changes, rows, lambda: touched_tables(changes))
    previous_day = max((d for d in applied_days(None, root) if d < day), default=None)
    effects = apply.local_effects(changes, keys, kafka_keys, schema.rewrite)
    tables, skipped = apply.local_tables(effects)
    prepared_tables(None, root, day, list(dict.fromkeys([*tables, *schema.tables])), restored, schema)
    held, live = held_keys(root, tables)
    for table in tables:
        why = None if table in held else small_tables.unwritable_table(table_paths(root, table))
        if why:  # the engine table sends such a day to Spark (`unwritable`): a lake changed since
            raise RuntimeError(f"the local engine cannot write this table: {why}")
    live_among = functools.partial(apply.live_among, live)
    folded = apply.fold_local(effects, skipped, live_among, bool(schema.rewrite.routes))
    opened = apply.opened_rows(folded)
    figures = values.figure_rows(opened)
    ddl_rows, unread = ddl_dataset(ddl, day, dialects)
    events = folded.effects.filter(pc.equal(folded.effects.column("sub"), 0))
    invalid = not all(f.valid for f in figures.values())
    anomalies = _anomalies(root, day, folded, opened, events if late else None, invalid,
                           pa.concat_tables([unread, schema.anomalies]))  # fmt: skip
    replace_local_day(anomalies, join(root, ANOMALIES), day, ANOMALY_SCHEMA)
    ids = events.select(["event_id"]).append_column("dt", pa.array([day] * events.num_rows, pa.string()))
    replace_local_day(ids, join(root, APPLIED), day, APPLIED_SCHEMA)
    replace_local_day(ddl_rows, join(root, DDL), day, DDL_SCHEMA)
    before = rows_before(root, previous_day)
    days = table_days([f.as_dict() for f in folded.figures.values()], figures, held)
    plans = {d.table: small_tables.day_columns(table_paths(root, d.table), d) for d in days}
    typed = small_tables.day_rows(folded.folded, plans)
    entries = [write_table(root, day, d, typed[d.table], plans[d.table], before) for d in days]
    return finished_day(None, root, day, schema, entries, previous_day, skipped, events.num_rows,
                        anomalies.to_pylist())  # fmt: skip


def held_keys(root: str, tables: list[tuple]) -> tuple[dict, pa.Table]:
    """The columns of each of `tables` delta-rs wrote, and their live keys (`TABLE`, `_t`, `_k`, `_shard`:
    `small_tables.live_keys`), read without Spark."""
    held, parts = {}, []
    for table in tables:
        own = small_tables.live_keys(table_paths(root, table).current)
        if own is None:
            continue
        held[table], keys = own
        named = {c: pa.array([v] * len(keys), pa.string()) for c, v in zip((*TABLE, "_t"), (*table, table_text(table)),
                                                                           strict=True)}  # fmt: skip
        parts.append(pa.table({**named, "_k": keys.column("_k"), "_shard": keys.column("_shard")}))
    empty = pa.table({c: pa.array([], pa.string()) for c in (*TABLE, "_t", "_k", "_shard")})
    return held, pa.concat_tables([empty, *parts])


def _anomalies(
    root: str, day: str, folded: apply.LocalFold, opened: pa.Table, late: pa.Table | None, invalid: bool,
    unread: pa.Table,
) -> pa.Table:  # fmt: skip
    """The fold's anomalies, the values failing their type (looked for only where the day has some:
    `invalid`), on a late day those of its events applied (`late`) that a run of it before did not apply, and
    the DDL not read (`unread`)."""
    rows = folded.folded.filter(pc.equal(folded.folded.column("_out"), ANOMALY))
    parts = [rows.rename_columns([ANOMALY_NAMES.get(c, c) for c in rows.column_names]), unread]
    if invalid:
        parts.append(values.invalid_cells(opened))
    if late is not None:
        before = delta_rs.read_partition(join(root, APPLIED), "dt", day, ["event_id"])
        if before is not None:
            late = late.filter(pc.invert(pc.is_in(late.column("event_id"), before.column("event_id"))))
        n = late.num_rows
        parts.append(pa.table({**{c: late.column(c) for c in TABLE}, "kind": pa.array([LATE_EVENT] * n),
                               "event_id": late.column("event_id"), "op": late.column("op"),
                               "detail": pa.array([LATE_DETAIL] * n)}))  # fmt: skip
    rows = pa.concat_tables([p.select(list(ANOMALY_COLUMNS)).cast(ANOMALY_TEXT) for p in parts])
    return rows.append_column("dt", pa.array([day] * rows.num_rows, pa.string()))
