"""Routes: the rows of sharded source tables (`shop.orders_00` ... `shop.orders_63`) into one sink table, as
Flink CDC's `route` block does.

A route is a regular expression on the source's `db.table` (the whole name must match) and the sink's
`db.table`, with the sink's key where it differs from the sources' (`key: [_cdc_source_table, id]` keeps
the same id from two shards apart). The first route that matches wins; a table no route matches keeps its
own name. A catalog gives `routes: [{source_table, sink_table, key}]`, the command line `REGEX=DB.TABLE`.
Every routed row carries its shard's `db.table` in `SOURCE_TABLE_COLUMN`.

A column rename or drop on a sink is applied only when every shard's DDL makes it (`ShardAgreement`): a sink
whose shards disagree keeps the column, and the disagreement is an anomaly.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

SOURCE_TABLE_COLUMN = "_cdc_source_table"
_SINK = re.compile(r"[^.\s]+\.[^.\s]+")


class RouteError(ValueError):
    """A route that is not a valid regular expression and a `db.table` sink."""


@dataclass(frozen=True)
class Route:
    source_table: str  # a regular expression on db.table, matched in full
    sink_table: str  # db.table
    key: tuple[str, ...] = ()  # the sink's key columns; empty: the sources'
    pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "pattern", re.compile(self.source_table))
        except re.error as exc:
            raise RouteError(f"route source_table {self.source_table!r} is not a regular expression: {exc}") from None
        if not _SINK.fullmatch(self.sink_table):
            raise RouteError(f"route sink_table {self.sink_table!r} is not db.table")
        if not all(isinstance(c, str) and c for c in self.key):
            raise RouteError(f"route key {list(self.key)!r} is not a list of column names")

    @property
    def sink(self) -> tuple[str, str]:
        db, _, table = self.sink_table.partition(".")
        return db, table


def parse_route(spec: str) -> Route:
    """The command line's `REGEX=DB.TABLE` (split at the last `=`: a regular expression may hold one)."""
    source, sep, sink = spec.rpartition("=")
    if not sep or not source:
        raise RouteError(f"route {spec!r} is not REGEX=DB.TABLE")
    return Route(source, sink)


def routes_of(entries: object) -> tuple[Route, ...]:
    """The catalog's `routes: [{source_table, sink_table, key}]`."""
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise RouteError("routes must be a list of {source_table, sink_table, key}")
    routes = []
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) - {"source_table", "sink_table", "key"}:
            raise RouteError(f"route {entry!r} takes source_table, sink_table and key")
        if not isinstance(entry.get("source_table"), str) or not isinstance(entry.get("sink_table"), str):
            raise RouteError(f"route {entry!r} needs a source_table and a sink_table")
        key = entry.get("key") or []
        if not isinstance(key, list):
            raise RouteError(f"route key {key!r} is not a list of column names")
        routes.append(Route(entry["source_table"], entry["sink_table"], tuple(key)))
    return tuple(routes)


def source_label(db: str | None, table: str) -> str:
    """A source table's `db.table` (the table alone where it has no db): what routes match and rows carry."""
    return f"{db}.{table}" if db else table


def route(routes: Sequence[Route], db: str | None, table: str) -> tuple[str, str, str] | None:
    """(sink db, sink table, source label) of the first route matching `db.table`; None where none does."""
    label = source_label(db, table)
    for candidate in routes:
        if candidate.pattern.fullmatch(label):
            return (*candidate.sink, label)
    return None


def sink_of(routes: Sequence[Route], db: str | None, table: str) -> tuple[str, str | None]:
    """(the `db.table` the rows of `db.table` go to: its route's sink, or itself; the shard's label where
    a route took it, else None)."""
    routed = route(routes, db, table) if routes else None
    return (f"{routed[0]}.{routed[1]}", routed[2]) if routed else (source_label(db, table), None)


class ShardAgreement:
    """Which changes every shard of a sink has made, counted in the day's order: `evolve` applies a column
    rename or drop on a sink at the DDL of the last shard that makes it, and one some shard never makes is
    an anomaly (the sink keeps the column). `shards` maps a sink's `db.table` to all its shards' labels."""

    def __init__(self, shards: Mapping[str, Iterable[str]]):
        self.shards = {sink: frozenset(labels) for sink, labels in shards.items()}
        self.made: dict[tuple[str, Hashable], set[str]] = {}

    def agree(self, sink: str, change: Hashable, shard: str) -> bool:
        """Record that `shard` made `change` on `sink`; True when every shard of the sink now has."""
        made = self.made.setdefault((sink, change), set())
        made.add(shard)
        if made >= self.shards.get(sink, made):
            del self.made[sink, change]
            return True
        return False

    def pending(self) -> list[tuple[str, Hashable, tuple[str, ...]]]:
        """(sink, change, the shards that did not make it) of each change not every shard made."""
        return [(sink, change, tuple(sorted(self.shards[sink] - made))) for (sink, change), made in self.made.items()]
