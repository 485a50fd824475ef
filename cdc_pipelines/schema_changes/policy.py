"""The schema evolution rule: what a day's schema changes do to its tables' columns under a topic's policy.

Pure and whole-day: given each table's columns at the day's start (name -> Spark type, in order) and the
day's DDL events in order, `plan_day` returns the plan as data (`DayPlan`): the columns after, renames,
drops, added and widened columns, tables created, renamed and dropped, each change at its place in the
day's order (`steps`, so rows before a rename use the old name), and the anomalies. The snapshot carries it
out; nothing here reads or writes a table.

The policies take Flink CDC's names, and what each does with each change is the table `POLICY_ACTIONS`:
- `lenient` (the default): add and widen only. A renamed column's new name is added beside the old one (as
  the rows after the rename will tell anyway); drops and table renames and drops are not applied.
- `evolve`: every change. A rename keeps the values under the new name, a drop takes the column out of the
  current table, a type change widens, DROP TABLE drops, a later CREATE starts the table anew.
- `ignore`: the columns stay as first seen; only a table not seen before takes its CREATE TABLE.
- `exception`: any schema change (or a DDL not read) fails the day with `SchemaChangeRefused`.

A type never narrows: the column takes `widen(old, declared)`, and a declared type narrower than the
column's (a decimal(12,2) declared decimal(10,2), text declared bigint) is a `narrowing` anomaly, so no
digit is lost. TRUNCATE changes rows, not columns: it is listed (`truncated`, by the DDL's own table, a
shard's where routed) under every policy.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from cdc_pipelines.model.column_types import widen
from cdc_pipelines.schema_changes.changes import (
    AddColumn,
    ChangeColumn,
    CreateTable,
    DdlEvent,
    DropColumn,
    DropTable,
    ModifyColumn,
    NotSchemaChange,
    Parsed,
    RenameColumn,
    RenameTable,
    TableName,
    TruncateTable,
    UnreadDdl,
)
from cdc_pipelines.schema_changes.routes import Route, ShardAgreement, route, sink_of

LENIENT, EVOLVE, IGNORE, EXCEPTION = "lenient", "evolve", "ignore", "exception"
POLICIES = (LENIENT, EVOLVE, IGNORE, EXCEPTION)
DEFAULT_POLICY = LENIENT

# what a policy does with a change: apply it (a type only widens); add the new name of a renamed column
# beside the old; apply only to a table not seen before; leave the table as it is; fail the day
APPLY, ADD_NEW_NAME, FIRST_SIGHT, SKIP, REFUSE = "apply", "add new name", "first sight", "skip", "refuse"
# a routed shard's: its rename or drop waits for every shard's DDL; its RENAME or DROP TABLE leaves the sink
WAIT_FOR_SHARDS, SKIP_SHARD = "wait for every shard", "skip: a shard of a routed sink"
_ALL = (CreateTable, AddColumn, ModifyColumn, ChangeColumn, RenameColumn, DropColumn, RenameTable, DropTable)
POLICY_ACTIONS: dict[str, dict[type, str]] = {
    LENIENT: {CreateTable: APPLY, AddColumn: APPLY, ModifyColumn: APPLY, ChangeColumn: ADD_NEW_NAME,
              RenameColumn: ADD_NEW_NAME, DropColumn: SKIP, RenameTable: SKIP, DropTable: SKIP},
    EVOLVE: dict.fromkeys(_ALL, APPLY),
    IGNORE: {**dict.fromkeys(_ALL, SKIP), CreateTable: FIRST_SIGHT},
    EXCEPTION: dict.fromkeys(_ALL, REFUSE),
}  # fmt: skip


class UnknownPolicy(ValueError):
    """A topic's `schema_changes` that names no policy."""


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise UnknownPolicy(f"schema_changes must be one of {', '.join(POLICIES)}, not {policy!r}")
    return policy


class SchemaChangeRefused(ValueError):
    """A schema change on a day whose topic's policy is `exception`: the day applies nothing."""

    def __init__(self, table: str, ddl: str, event_id: str):
        super().__init__(
            f"table {table}: schema change in event {event_id} ({ddl!r}) and the topic's schema_changes "
            f"policy is exception; nothing of the day is applied"
        )
        self.table, self.ddl, self.event_id = table, ddl, event_id


@dataclass(frozen=True)
class Anomaly:
    kind: str  # ddl_unread, narrowing, unknown_column, column_exists, table_exists
    event_id: str
    table: str
    detail: str


@dataclass(frozen=True)
class Step:
    """A change at its place in the day's order; `applied` False where the policy leaves the table as it is."""

    event_id: str
    table: str
    change: Parsed
    action: str
    applied: bool
    shard: str | None = None  # the shard's db.table where a route took its DDL into the sink `table`

    def __str__(self) -> str:
        return f"{self.event_id} {self.action}: {self.change}"


@dataclass(frozen=True)
class TablePlan:
    """One table after the day: its columns in order, and what changed them since the day's start."""

    table: str
    columns: Mapping[str, str]
    added: Mapping[str, str] = field(default_factory=dict)
    widened: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # name -> (type before, type after)
    renamed: tuple[tuple[str, str], ...] = ()  # (old, new), in order
    dropped: tuple[str, ...] = ()
    source: str | None = None  # its name at the day's start where it was renamed


@dataclass(frozen=True)
class DayPlan:
    policy: str
    tables: Mapping[str, TablePlan]  # by name after the day: each table a change touched
    steps: tuple[Step, ...]
    created: tuple[str, ...] = ()
    renamed_tables: tuple[tuple[str, str], ...] = ()
    dropped_tables: tuple[str, ...] = ()
    truncated: tuple[str, ...] = ()
    anomalies: tuple[Anomaly, ...] = ()


@dataclass
class _Table:
    """A table's state through the day: columns, where each came from, and what was done to it."""

    start_name: str | None
    start: dict[str, str]
    columns: dict[str, str]
    origin: dict[str, str | None]  # current column -> its name at the day's start (None: added today)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, name: str | None, columns: Mapping[str, str]) -> _Table:
        return cls(name, dict(columns), dict(columns), {c: c for c in columns})

    def plan(self, name: str) -> TablePlan:
        added = {c: t for c, t in self.columns.items() if self.origin[c] is None}
        widened = {
            c: (self.start[o], t) for c, t in self.columns.items() if (o := self.origin[c]) and self.start[o] != t
        }
        source = self.start_name if self.start_name not in (None, name) else None
        return TablePlan(name, dict(self.columns), added, widened, tuple(self.renamed), tuple(self.dropped), source)


class _Day:
    """One day's changes applied in order under a policy; `plan` gives the result."""

    def __init__(self, tables, policy: str, routes: Sequence[Route], shards: Mapping[str, Collection[str]]):
        self.policy, self.actions = policy, POLICY_ACTIONS[policy]
        self.routes, self.agreement = routes, ShardAgreement(shards)
        self.last_vote: dict[tuple[str, tuple[str, ...]], str] = {}
        self.state = {name: _Table.of(name, columns) for name, columns in tables.items()}
        self.touched: list[str] = []
        self.steps: list[Step] = []
        self.anomalies: list[Anomaly] = []
        self.created: list[str] = []
        self.renamed_tables: list[tuple[str, str]] = []
        self.dropped_tables: list[str] = []
        self.truncated: list[str] = []
        self.event_id = ""

    def anomaly(self, kind: str, table: str, detail: str) -> None:
        self.anomalies.append(Anomaly(kind, self.event_id, table, detail))

    def table(self, name: str) -> _Table:
        if name not in self.state:
            self.state[name] = _Table.of(None, {})
        if name not in self.touched:
            self.touched.append(name)
        return self.state[name]

    def event(self, event: DdlEvent) -> None:
        self.event_id = event.event_id
        for change in event.changes:
            if isinstance(change, NotSchemaChange):
                continue
            if isinstance(change, UnreadDdl):
                if self.policy == EXCEPTION:
                    raise SchemaChangeRefused(event.table_label, event.ddl, event.event_id)
                self.anomaly("ddl_unread", event.table_label, f"{change.reason}: {change.text}")
                continue
            change = replace(change, table=_qualified(change.table, event.db))
            if isinstance(change, RenameTable):
                change = replace(change, new_table=_qualified(change.new_table, event.db))
            if isinstance(change, TruncateTable):  # a shard's own name: its TRUNCATE empties only its rows
                self.truncated.append(str(change.table))
                continue
            name, shard = sink_of(self.routes, change.table.db, change.table.name)  # shard: a routed one's label
            action = self.actions[type(change)]
            if action == REFUSE:
                raise SchemaChangeRefused(str(change.table), event.ddl, event.event_id)
            if shard and isinstance(change, RenameTable | DropTable):
                action = SKIP_SHARD
            elif shard and action == APPLY and isinstance(change, RenameColumn | ChangeColumn | DropColumn):
                action = self.vote(name, change, shard)
            exists = name in self.state and bool(self.state[name].columns)
            applied = action in (APPLY, ADD_NEW_NAME, WAIT_FOR_SHARDS) or action == FIRST_SIGHT and not exists
            self.steps.append(Step(event.event_id, name, change, action, applied and action != WAIT_FOR_SHARDS, shard))
            if applied:
                self.apply(name, change, action, routed=shard is not None)

    def vote(self, sink: str, change, shard: str) -> str:
        """APPLY where this shard's DDL completes every shard's agreement on the rename or drop, else wait."""
        key = _agreement_key(change)
        if key is None:  # a CHANGE that keeps the name changes only the type
            return APPLY
        self.last_vote[sink, key] = self.event_id
        return APPLY if self.agreement.agree(sink, key, shard) else WAIT_FOR_SHARDS

    def apply(self, name: str, change, action: str, routed: bool) -> None:
        if action == WAIT_FOR_SHARDS:  # a CHANGE's type applies now, under the old name, its rename waits
            if isinstance(change, ChangeColumn) and change.old in self.table(name).columns:
                self.set_type(name, change.old, change.column.spark_type)
            return
        if isinstance(change, CreateTable):
            if name in self.state and self.state[name].columns and not routed:
                self.anomaly("table_exists", name, "CREATE TABLE of a table with columns: its columns are kept")
            elif name not in self.created and not (name in self.state and self.state[name].columns):
                self.created.append(name)
            for column in change.columns:
                self.set_type(name, column.name, column.spark_type)
        elif isinstance(change, AddColumn | ModifyColumn):
            column = change.column
            if isinstance(change, ModifyColumn) and column.name not in self.table(name).columns:
                self.anomaly("unknown_column", name, f"MODIFY of {column.name}, not a column: added")
            self.set_type(name, column.name, column.spark_type)
        elif isinstance(change, ChangeColumn):
            if change.old != change.column.name:
                self.rename(name, change.old, change.column.name, action)
            self.set_type(name, change.column.name, change.column.spark_type)
        elif isinstance(change, RenameColumn):
            self.rename(name, change.old, change.new, action)
        elif isinstance(change, DropColumn):
            table = self.table(name)
            if table.columns.pop(change.name, None) is None:
                self.anomaly("unknown_column", name, f"DROP of {change.name}, not a column")
            else:
                table.origin.pop(change.name)
                table.dropped.append(change.name)
        elif isinstance(change, RenameTable):
            new = str(change.new_table)
            if new in self.state and self.state[new].columns:
                self.anomaly("table_exists", new, f"RENAME TABLE {name} onto a table with columns: not renamed")
                return
            self.state[new] = self.state.pop(name, None) or _Table.of(None, {})
            self.touched = [new if t == name else t for t in self.touched]
            self.table(new)
            self.renamed_tables.append((name, new))
        elif isinstance(change, DropTable):
            self.state.pop(name, None)
            self.touched = [t for t in self.touched if t != name]
            self.dropped_tables.append(name)

    def set_type(self, name: str, column: str, declared: str) -> None:
        """The column takes `widen(its type, declared)`: added where new, never narrowed."""
        table = self.table(name)
        old = table.columns.get(column)
        wide = widen(old, declared)
        if old is not None and wide != declared:
            self.anomaly("narrowing", name, f"{column} is {old}, declared {declared}: kept as {wide}")
        if old is None:
            table.origin[column] = None
        table.columns[column] = wide

    def rename(self, name: str, old: str, new: str, action: str) -> None:
        table = self.table(name)
        if old not in table.columns:
            self.anomaly("unknown_column", name, f"RENAME of {old}, not a column")
            return
        if action == ADD_NEW_NAME:  # the new name may be there already, from the rows: it widens to hold both
            table.origin.setdefault(new, None)
            table.columns[new] = widen(table.columns.get(new), table.columns[old])
            return
        if new in table.columns:
            self.anomaly("column_exists", name, f"RENAME of {old} to {new}, already a column: not renamed")
            return
        table.columns = {new if c == old else c: t for c, t in table.columns.items()}
        table.origin = {new if c == old else c: o for c, o in table.origin.items()}
        table.renamed.append((old, new))

    def plan(self) -> DayPlan:
        for sink, key, missing in self.agreement.pending():
            self.event_id = self.last_vote[sink, key]
            self.anomaly("shards_disagree", sink, f"{key[0]} {' -> '.join(key[1:])} not in {', '.join(missing)}")
        tables = {name: self.state[name].plan(name) for name in self.touched if name in self.state}
        lists = (self.steps, self.created, self.renamed_tables, self.dropped_tables, self.truncated, self.anomalies)
        return DayPlan(self.policy, tables, *map(tuple, lists))


def _agreement_key(change) -> tuple[str, ...] | None:
    """What shards must agree on: a rename's (old, new), a drop's column."""
    if isinstance(change, DropColumn):
        return ("DROP", change.name)
    if isinstance(change, RenameColumn):
        return ("RENAME", change.old, change.new)
    return ("RENAME", change.old, change.column.name) if change.old != change.column.name else None


def _shards(events: Sequence[DdlEvent], routes: Sequence[Route], given: Mapping[str, Collection[str]]):
    """Each sink's shards: those given, and those whose DDL the day routes to it."""
    shards = {sink: set(labels) for sink, labels in given.items()}
    for event in events:
        for change in event.changes:
            table = getattr(change, "table", None)
            routed = table and route(routes, _qualified(table, event.db).db, table.name)
            if routed:
                shards.setdefault(f"{routed[0]}.{routed[1]}", set()).add(routed[2])
    return shards


def _qualified(table: TableName, db: str | None) -> TableName:
    return table if table.db or not db else TableName(table.name, db)


def plan_day(
    tables: Mapping[str, Mapping[str, str]],
    events: Sequence[DdlEvent],
    policy: str = DEFAULT_POLICY,
    routes: Sequence[Route] = (),
    shards: Mapping[str, Collection[str]] | None = None,
) -> DayPlan:
    """The day's plan: `tables` maps `db.table` (a sink's, where routed) to its columns at the day's start
    (name -> Spark type, in order; a table not listed has none yet), `events` are the day's DDL events in
    the day's order. With `routes`, a shard's DDL changes its sink; a column rename or drop applies at the
    DDL of the last of the sink's `shards` (sink -> shard labels; those the day's DDL names are added) to
    make it, and a routed shard's RENAME or DROP TABLE leaves the sink as it is.
    Raises `SchemaChangeRefused` on the first schema change under `exception`."""
    day = _Day(tables, check_policy(policy), routes, _shards(events, routes, shards or {}))
    for event in events:
        day.event(event)
    return day.plan()
