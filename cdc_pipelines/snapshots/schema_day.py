"""What a day's DDL and routes do to the snapshot tables: `policy.plan_day`'s plan, carried out for both engines.

- the day's events rewritten (`event_rewrite`): routed rows under their sink, renamed columns and tables
  under the names the day ends with, a DROP TABLE as a TRUNCATE at its place;
- before the fold (`before_fold`): a renamed table's two tables carried to the new name (the old emptied,
  so a backfill restores both), renamed columns renamed in both tables, added columns added and modified
  ones widened to their declared types (never narrowed: a `narrowing` anomaly), a CREATE TABLE's table made;
- after the writes (`after_writes`): a dropped column taken out of the current table (the history keeps it);
- the plan's anomalies (a narrowing, a rename of no column, shards that disagree) with their event ids.

`evolve` changes tables here (and types the values of rows whose format names no type); `ignore` keeps each
table's columns as first seen (other columns left out of its images, each an `ignored_column` anomaly);
`lenient` needs no plan; `exception` refused the day before (`schema_changes.day`). Every change is a new
Delta version, recorded with the day's, so a backfill's RESTORE undoes it and the re-applied day redoes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from cdc_pipelines.lake import io
from cdc_pipelines.schema_changes.changes import (
    ChangeColumn,
    CreateTable,
    DropColumn,
    DropTable,
    RenameColumn,
    RenameTable,
)
from cdc_pipelines.schema_changes.day import policy_of
from cdc_pipelines.schema_changes.policy import EVOLVE, IGNORE, plan_day
from cdc_pipelines.schema_changes.routes import SOURCE_TABLE_COLUMN, Route, sink_of
from cdc_pipelines.snapshots import small_tables, tables
from cdc_pipelines.snapshots.day import ANOMALY_TEXT, carrying, image_names
from cdc_pipelines.snapshots.event_rewrite import COLUMN, TABLE_RENAME, EventRewrite, Step, table_of
from cdc_pipelines.snapshots.fold import FOLD_SCHEMA
from cdc_pipelines.snapshots.schema import CURRENT_CDC, HISTORY_CDC, TABLE
from cdc_pipelines.snapshots.store import table_paths
from cdc_pipelines.snapshots.values import ColumnPlan, logical_type


def table_key(label: str) -> tuple:
    """A `db.table` label as the snapshot's table (`TABLE`: db, db_schema, table_name)."""
    db, table = table_of(label)
    return db, None, table


def routes_by_topic(routes: Sequence[Route] | Mapping[str, Sequence[Route]] | None) -> dict[str, tuple[Route, ...]]:
    """Routes by topic; routes given for every topic (the command line's `--route`) under `*`."""
    if not routes:
        return {}
    if isinstance(routes, Mapping):
        return {topic: tuple(r) for topic, r in routes.items() if r}
    return {"*": tuple(routes)}


@dataclass(frozen=True)
class SchemaDay:
    """The day's schema changes as the writers carry them out (see the module); empty on most days."""

    rewrite: EventRewrite = field(default_factory=EventRewrite)
    carried: tuple[tuple[tuple, tuple], ...] = ()  # (old table, new table), in the day's order
    renamed: Mapping[tuple, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # table -> (old, new)
    dropped: Mapping[tuple, tuple[str, ...]] = field(default_factory=dict)  # table -> columns its current loses
    created: Mapping[tuple, tuple[list[ColumnPlan], list[str]]] = field(default_factory=dict)  # -> columns, key
    declared: Mapping[tuple, list[ColumnPlan]] = field(default_factory=dict)  # table -> columns added or widened
    anomalies: pa.Table = field(default_factory=ANOMALY_TEXT.empty_table)

    @property
    def tables(self) -> list[tuple]:
        """The tables the day's DDL changes on the lake besides its rows."""
        named = [t for pair in self.carried for t in pair] + [*self.renamed, *self.declared, *self.dropped,
                                                               *self.created]  # fmt: skip
        return list(dict.fromkeys(named))


def schema_day(
    ddl: Sequence[Mapping],
    policies: str | Mapping[str, str],
    dialects: Mapping[str, str | None] | None,
    routes: Mapping[str, tuple[Route, ...]],
    held: Callable[[tuple], Mapping[str, str]],
    rows: Callable[[tuple], pa.Table],
    touched: Callable[[], Mapping[str, list[tuple]]],
) -> SchemaDay:
    """The day's `SchemaDay` from its DDL events in the day's order (`day.ddl_events`, with their `place`) and each
    topic's policy, dialect and routes. `held(table)`: its current table's columns at the start of the day (name ->
    type; none where no earlier day made it), else those its rows carry before its first DDL; `rows(table)`: its
    row changes of the day; `touched()`: the tables each topic's rows name (asked under `ignore` or `evolve`)."""
    kept = {}  # the tables of each `ignore` and `evolve` topic: their columns, or their types, kept
    if {IGNORE, EVOLVE} & ({policies} if isinstance(policies, str) else set(policies.values())):
        kept = {t: tables for t, tables in touched().items() if policy_of(policies, t) in (IGNORE, EVOLVE)}
    planned = [e for e in ddl if policy_of(policies, e["source_topic"]) in (EVOLVE, IGNORE)]
    if not planned and not kept:
        return SchemaDay(EventRewrite(routes))
    day = _Day(rows)
    for topic in dict.fromkeys([*(e["source_topic"] or "" for e in planned), *kept]):
        own, policy = routes.get(topic) or routes.get("*", ()), policy_of(policies, topic)
        events = [e for e in planned if (e["source_topic"] or "") == topic]
        plan = None
        if events:
            from cdc_pipelines.schema_changes.ddl import read_event  # sqlglot: only for a day that has such DDL

            parsed = [read_event(e, (dialects or {}).get(topic)) for e in events]
            start = {label: dict.fromkeys(image_names(rows(table_key(label)), events[first]["place"]))
                     | dict(held(table_key(label))) for label, first in _named(parsed, own).items()}  # fmt: skip
            plan = plan_day(start, parsed, policy, own)
            day.carry_out(plan, events)
        for table in kept.get(topic, ()):
            sink, shard = sink_of(own, table[0], table[2])
            if policy == IGNORE:
                day.fix(table, sink, held(table_key(sink)), routed=shard is not None)
            else:
                after = plan.tables[sink].columns if plan and sink in plan.tables else held(table_key(sink))
                day.declare(sink, after)
    return day.result(routes)


class _Day:
    """The day's `SchemaDay` as its topics' plans and tables are taken in (`carry_out`, `declare`, `fix`)."""

    def __init__(self, rows: Callable[[tuple], pa.Table]):
        self.rows = rows
        self.steps, self.drops, self.carried, self.anomalies, self.fixed = [], {}, [], [], {}
        self.renamed, self.dropped, self.created, self.declared, self.keys, self.typed = {}, {}, {}, {}, {}, {}

    def anomaly(self, table: str, kind: str, event_id: str, op: str, detail: str) -> None:
        self.anomalies.append({**dict(zip(TABLE, table_key(table), strict=True)), "kind": kind,
                               "event_id": event_id, "op": op, "detail": detail})  # fmt: skip

    def carry_out(self, plan, events: list[Mapping]) -> None:
        """A topic's plan: its applied steps in the day's events and on the lake, its anomalies."""
        place = {e["event_id"]: e["place"] for e in events}
        for step in plan.steps:
            change, at = step.change, place[step.event_id]
            if not step.applied:
                continue
            if isinstance(change, RenameColumn):
                self.steps.append(Step(at, COLUMN, step.table, change.old, change.new))
            elif isinstance(change, ChangeColumn) and change.old != change.column.name:
                self.steps.append(Step(at, COLUMN, step.table, change.old, change.column.name))
            elif isinstance(change, RenameTable):
                self.steps.append(Step(at, TABLE_RENAME, step.table, step.table, str(change.new_table)))
            elif isinstance(change, DropColumn):  # a row after it that carries the column disagrees: kept
                detail = f"{change.name} carried after its DROP COLUMN (event {step.event_id}): kept in the history"
                for event_id, op in carrying(self.rows(table_key(step.table)), change.name, at):
                    self.anomaly(step.table, "dropped_column_in_row", event_id, op, detail)
            elif isinstance(change, DropTable):
                self.drops[step.event_id] = (*self.drops.get(step.event_id, ()), step.table)
            elif isinstance(change, CreateTable) and step.table in plan.created:
                self.keys[table_key(step.table)] = list(change.primary_key)
        self.carried += [(table_key(old), table_key(new)) for old, new in plan.renamed_tables]
        for label, table in plan.tables.items():
            key = table_key(label)
            if table.renamed:
                self.renamed[key] = table.renamed
            if table.dropped:
                self.dropped[key] = table.dropped
            typed = {**table.added, **{c: after for c, (before, after) in table.widened.items() if before}}
            if typed and key not in self.keys:
                self.declared[key] = [ColumnPlan(c, t) for c, t in typed.items() if t is not None]
            if key in self.keys:
                self.created[key] = ([ColumnPlan(c, t) for c, t in table.columns.items() if t], self.keys[key])
        for a in plan.anomalies:
            if a.kind != "ddl_unread":  # `day.ddl_dataset` reports those, under every policy
                self.anomaly(a.table, a.kind, a.event_id, "DDL", a.detail)

    def declare(self, label: str, columns: Mapping[str, str | None]) -> None:
        """Under `evolve`, the logical types of a table's typed columns, for its rows whose format names none."""
        types = {c: logical for c, t in columns.items() if (logical := logical_type(t))}
        if types:
            self.typed[label] = {**self.typed.get(label, {}), **types}

    def fix(self, table: tuple, label: str, held: Mapping[str, str], routed: bool) -> None:
        """Under `ignore`, `table`'s rows keep the columns its sink (`label`) had at first sight: its current
        table's, or the ones its CREATE TABLE declared; a table seen first today keeps what its rows carry.
        Each column left out is one `ignored_column` anomaly (its first row's event id, how many rows)."""
        created = self.created.get(table_key(label))
        columns = set(held) or ({c.name for c in created[0]} if created else set())
        if not columns:
            return
        columns |= {SOURCE_TABLE_COLUMN} if routed else set()
        self.fixed[label] = frozenset(columns) | self.fixed.get(label, frozenset())
        rows = self.rows(table)
        for name in image_names(rows):
            if name not in self.fixed[label]:
                found = carrying(rows, name)
                detail = f"{name}: {len(found)} row(s) carry it; the table's columns are fixed (schema_changes: ignore)"
                self.anomaly(label, "ignored_column", found[0][0], found[0][1], detail)

    def result(self, routes: Mapping[str, tuple[Route, ...]]) -> SchemaDay:
        steps = tuple(sorted(self.steps, key=lambda s: s.place))
        rewrite = EventRewrite(routes, steps, self.drops, self.fixed, self.typed)
        anomalies = pa.Table.from_pylist(self.anomalies, ANOMALY_TEXT)
        return SchemaDay(rewrite, tuple(self.carried), self.renamed, self.dropped, self.created, self.declared,
                         anomalies)  # fmt: skip


def _named(parsed, routes: Sequence[Route]) -> dict[str, int]:
    """The tables (their sinks' where routed) the DDL names, as `policy` labels them, with the index of the
    first event naming each."""
    names: dict[str, int] = {}
    for i, event in enumerate(parsed):
        for change in event.changes:
            for table in (getattr(change, "table", None), getattr(change, "new_table", None)):
                if table is None:
                    continue
                names.setdefault(sink_of(routes, table.db or event.db, table.name)[0], i)
    return names


def before_fold(spark, root: str, day: SchemaDay) -> None:
    """The day's tables carried, columns renamed and tables created on the lake (see the module), each by
    the writer of its table (`small_tables.owns`): delta-rs, or Spark's Delta."""
    for old, new in day.carried:
        source, target = table_paths(root, old), table_paths(root, new)
        if not _exists(spark, source.current):
            continue
        owned = small_tables.owns(source, spark)
        for a, b, cdc in ((source.current, target.current, CURRENT_CDC), (source.history, target.history, HISTORY_CDC)):
            small_tables.carry(a, b) if owned else tables.carry(spark, a, b, cdc)
    for table, pairs in day.renamed.items():
        paths = table_paths(root, table)
        owned = small_tables.owns(paths, spark)
        for path in (p for p in (paths.current, paths.history) if _exists(spark, p)):
            small_tables.rename_columns(path, list(pairs)) if owned else tables.rename_columns(spark, path, list(pairs))
    # the columns declared today, on a table there is (one CREATE TABLE makes again after its DROP TABLE too)
    for table, columns in (day.declared | {t: c for t, (c, _) in day.created.items()}).items():
        paths = table_paths(root, table)
        if not _exists(spark, paths.current):
            continue
        # delta-rs's table, where it widens as Spark would print (`small_tables.evolve_columns`)
        held = small_tables.column_plans(paths.current)
        if held is None or small_tables.evolve_columns(paths, columns, held, small_tables.prints_utc(spark)) is None:
            held = held or tables.source_columns(spark.read.format("delta").load(paths.current).schema)
            tables.prepare(spark, paths, columns, [], held)
    for table, (columns, key) in day.created.items():
        paths = table_paths(root, table)
        if _exists(spark, paths.current):
            continue
        ordered = tables.column_order(columns, key)
        if small_tables.owns(paths, spark, names=[c.name for c in ordered]):
            rows = small_tables.day_rows(FOLD_SCHEMA.empty_table(), {table: ordered})[table]
            small_tables.write_day(paths, rows, ordered, existed=False, fresh=True, truncated=False)
        else:
            tables.prepare(spark, paths, ordered, key, None)


def held_columns(spark, root: str, started: Callable[[], set[tuple]], table: tuple) -> dict[str, str]:
    """A table's columns at the start of the day (name -> type), where a day before made it (`started`: a
    backfill leaves a later day's table at its empty version 0): read by delta-rs, or by Spark for its own."""
    path = table_paths(root, table).current
    held = small_tables.column_plans(path) if table in started() else []
    if held is None and spark is not None and _exists(spark, path):
        held = tables.source_columns(spark.read.format("delta").load(path).schema)
    return {c.name: c.spark_type for c in held or []}


def after_writes(spark, root: str, day: SchemaDay) -> None:
    """The columns the day dropped taken out of each current table (see the module)."""
    for table, names in day.dropped.items():
        paths = table_paths(root, table)
        if not _exists(spark, paths.current):
            continue
        if small_tables.owns(paths, spark):
            small_tables.drop_columns(paths.current, list(names))
        else:
            tables.drop_columns(spark, paths.current, list(names))


def _exists(spark, path: str) -> bool:
    return io.table_version(spark, path) is not None
