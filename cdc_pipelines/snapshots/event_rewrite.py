"""A day's events as its schema changes and routes leave them, before their effects are computed: one
function over Arrow record batches, so both engines fold the same stream.

- A routed shard's rows become the sink table's, each image carrying the shard's `db.table` in
  `_cdc_source_table`, keyed by the route's key where it names one.
- Under `evolve`, a row before a column rename or a RENAME TABLE (in the day's order: `steps`, each at its
  DDL's place) takes the new names, and a DROP TABLE is a TRUNCATE at its DDL's place; a column whose type
  the row's format does not name (`UNKNOWN`) takes its table's declared one (`typed`), so a value that does
  not fit is a `cast_failed` anomaly as for any format.
- Under `ignore`, a row's images keep only the columns its table had at first sight (`fixed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.schema_changes.routes import SOURCE_TABLE_COLUMN, Route, route, source_label
from cdc_pipelines.snapshots.effects import places

_IMAGES = ("before", "after")
COLUMN, TABLE_RENAME = "column", "table"


def table_of(label: str) -> tuple[str | None, str]:
    """A `db.table` label's (db, table) (the table alone where it has no db)."""
    db, dot, table = label.rpartition(".")
    return (db if dot else None), table


@dataclass(frozen=True)
class Step:
    """A rename at its place in the day: a column of `table` (`COLUMN`) or the table itself (`TABLE_RENAME`,
    `old` and `new` the table's labels)."""

    place: bytes
    kind: str
    table: str
    old: str
    new: str


@dataclass(frozen=True)
class EventRewrite:
    """What `rewrite` does to a day's events: `routes` by topic, the renames in the day's order (`steps`),
    and the tables each DROP TABLE empties (by the DDL's event id)."""

    routes: Mapping[str, tuple[Route, ...]] = field(default_factory=dict)
    steps: tuple[Step, ...] = ()
    drops: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fixed: Mapping[str, frozenset[str]] = field(default_factory=dict)  # table label -> the columns it keeps
    typed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # table label -> column -> logical type

    def __bool__(self) -> bool:
        return bool(any(self.routes.values()) or self.steps or self.drops or self.fixed or self.typed)

    def rewrite(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The batch's events as the day's routes and schema changes leave them (see the module)."""
        if self.drops:
            batch = self._truncates(batch)
        if any(self.routes.values()):
            batch = self._routed(batch)
        if self.steps:
            batch = self._renamed(batch)
        if self.fixed:
            batch = self._fixed(batch)
        if self.typed:
            batch = self._typed(batch)
        return batch

    def _labels(self, batch: pa.RecordBatch) -> np.ndarray:
        dbs, names = batch.column("db").to_pylist(), batch.column("table_name").to_pylist()
        return np.array([source_label(db, t) for db, t in zip(dbs, names, strict=True)], dtype=object)

    def _typed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Each row of a `typed` table with its table's logical type where its format names none."""
        maps = batch.column("column_types")
        offsets, owner, keys, items = _entries(maps)
        labels = self._labels(batch)[owner]
        unnamed = pc.fill_null(pc.equal(items, "UNKNOWN"), True).to_numpy(zero_copy_only=False)
        for label, types in self.typed.items():
            at = pc.index_in(keys, pa.array(list(types), pa.string()))
            fill = (labels == label) & unnamed & at.is_valid().to_numpy(zero_copy_only=False)
            if fill.any():
                items = pc.if_else(pa.array(fill), pa.array(list(types.values()), pa.string()).take(at), items)
        typed = pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), keys, items,
                                        mask=pc.invert(maps.is_valid()))  # fmt: skip
        columns = dict(zip(batch.schema.names, batch.columns, strict=True)) | {"column_types": typed}
        return pa.RecordBatch.from_arrays(list(columns.values()), schema=batch.schema)

    def _fixed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Each row of a `fixed` table with only that table's columns in its images."""
        labels = self._labels(batch)
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        for image in (*_IMAGES, "column_types"):
            columns[image] = only_columns(columns[image], labels, self.fixed)
        return pa.RecordBatch.from_arrays(list(columns.values()), schema=batch.schema)

    def _truncates(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Each DDL event that drops tables, followed by one TRUNCATE of each, at the DDL's place."""
        ids = batch.column("event_id").to_pylist()
        ops = batch.column("op").to_pylist()
        extra = []
        for i, (op, event_id) in enumerate(zip(ops, ids, strict=True)):
            for label in self.drops.get(event_id, ()) if op == "DDL" else ():
                db, table = table_of(label)
                cells = {"op": "TRUNCATE", "db": db, "db_schema": None, "table_name": table, "pk_columns": None}
                extra.append(batch.slice(i, 1).to_pylist()[0] | cells)
        if not extra:
            return batch
        added = pa.RecordBatch.from_pylist(extra, schema=batch.schema)
        return pa.Table.from_batches([batch, added]).combine_chunks().to_batches()[0]

    def _routed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Each routed row as its sink's: its table, its images with `_cdc_source_table`, the route's key."""
        names = ("source_topic", "db", "table_name")
        found: dict[tuple, tuple[Route, str] | None] = {}
        sinks: list[tuple[Route, str] | None] = []
        for topic, db, table in zip(*(batch.column(c).to_pylist() for c in names), strict=True):
            if (topic, db, table) not in found:
                routes = self.routes.get(topic or "") or self.routes.get("*", ())
                hit = route(routes, db, table) if routes else None  # (sink db, sink table, source label)
                first = next((r for r in routes if hit and r.pattern.fullmatch(hit[2])), None)
                found[topic, db, table] = (first, hit[2]) if hit else None
            sinks.append(found[topic, db, table])
        routed = np.array([s is not None for s in sinks])
        if not routed.any():
            return batch
        labels = [s[1] if s else None for s in sinks]
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        sink = [s[0].sink if s else None for s in sinks]
        columns["db"] = pa.array([s[0] if s else v for s, v in zip(sink, columns["db"].to_pylist(), strict=True)],
                                 pa.string())  # fmt: skip
        columns["db_schema"] = pc.if_else(pa.array(routed), pa.scalar(None, pa.string()), columns["db_schema"])
        columns["table_name"] = pa.array([s[1] if s else v for s, v in zip(sink, columns["table_name"].to_pylist(),
                                                                           strict=True)], pa.string())  # fmt: skip
        keys = [list(s[0].key) if s and s[0].key else None for s in sinks]
        if any(keys):
            named = columns["pk_columns"].to_pylist()
            columns["pk_columns"] = pa.array([k or v for k, v in zip(keys, named, strict=True)],
                                             columns["pk_columns"].type)  # fmt: skip
        text = pa.array(labels, pa.string())
        for image in _IMAGES:
            columns[image] = with_entry(columns[image], routed, SOURCE_TABLE_COLUMN, text)
        columns["column_types"] = with_entry(columns["column_types"], routed, SOURCE_TABLE_COLUMN,
                                             pa.array(["STRING"] * len(labels), pa.string()))  # fmt: skip
        return pa.RecordBatch.from_arrays(list(columns.values()), schema=batch.schema)

    def _renamed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Each row of a table a later step of the day renames (or renames a column of), under the names
        the day ends with."""
        renamed = {s.table for s in self.steps}
        labels = self._labels(batch)
        rows = [i for i, label in enumerate(labels) if label in renamed]
        if not rows:
            return batch
        taken = batch.take(pa.array(rows, pa.int64()))
        rewritten = ("db", "db_schema", "table_name", "pk_columns", *_IMAGES, "column_types")
        cells = {c: taken.column(c).to_pylist() for c in rewritten}
        for j, place in enumerate(places(taken)):
            label, names = labels[rows[j]], {}
            for step in self.steps:
                if step.place <= place or step.table != label:
                    continue
                if step.kind == TABLE_RENAME:
                    label = step.new
                else:
                    names = {k: (step.new if v == step.old else v) for k, v in names.items()}
                    names.setdefault(step.old, step.new)
            if label != labels[rows[j]]:
                cells["db"][j], cells["table_name"][j] = table_of(label)
                cells["db_schema"][j] = None
            if names:
                for image in (*_IMAGES, "column_types"):
                    if cells[image][j] is not None:
                        cells[image][j] = [(names.get(k, k), v) for k, v in cells[image][j]]
                if cells["pk_columns"][j] is not None:
                    cells["pk_columns"][j] = [names.get(k, k) for k in cells["pk_columns"][j]]
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        index = np.arange(batch.num_rows)
        index[rows] = batch.num_rows + np.arange(len(rows))  # a renamed row taken from its new values
        for name, values in cells.items():
            columns[name] = pa.concat_arrays([columns[name], pa.array(values, columns[name].type)]).take(index)
        return pa.RecordBatch.from_arrays(list(columns.values()), schema=batch.schema)


def _entries(maps: pa.MapArray) -> tuple[np.ndarray, np.ndarray, pa.Array, pa.Array]:
    """A map column's offsets (from 0), each entry's row, and the entries' keys and items."""
    offsets = maps.offsets.to_numpy().astype(np.int64)
    base, end = offsets[0], offsets[-1]
    owner = np.repeat(np.arange(len(maps)), np.diff(offsets))
    return offsets - base, owner, maps.keys.slice(base, end - base), maps.items.slice(base, end - base)


def only_columns(maps: pa.MapArray, labels: np.ndarray, fixed: Mapping[str, frozenset[str]]) -> pa.MapArray:
    """`maps` with, in the rows of each table `fixed` names (`labels`: each row's table), only its columns."""
    _, owner, keys, items = _entries(maps)
    keep = np.ones(len(keys), bool)
    for label, allowed in fixed.items():
        mine = labels[owner] == label
        if mine.any():
            known = pc.is_in(keys, pa.array(sorted(allowed), pa.string())).to_numpy(zero_copy_only=False)
            keep[mine] = known[mine]
    if keep.all():
        return maps
    starts = np.concatenate([[0], np.cumsum(np.bincount(owner[keep], minlength=len(maps)))])
    kept = pa.array(keep)
    return pa.MapArray.from_arrays(pa.array(starts, pa.int32()), keys.filter(kept), items.filter(kept),
                                   mask=pc.invert(maps.is_valid()))  # fmt: skip


def with_entry(maps: pa.MapArray, rows: np.ndarray, key: str, values: pa.Array) -> pa.MapArray:
    """`maps` with `key` -> `values[i]` first in each present map of the rows `rows` marks (a day of a routed
    topic has every row so: by offsets, not row by row)."""
    offsets, owner, old_keys, old_items = _entries(maps)
    n = len(old_keys)
    add = (rows & maps.is_valid().to_numpy(zero_copy_only=False)).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(np.diff(offsets) + add)])
    old_at = starts[owner] + add[owner] + (np.arange(n) - offsets[owner])
    new_rows = np.flatnonzero(add)
    index = np.empty(starts[-1], np.int64)
    index[old_at] = np.arange(n)
    index[starts[new_rows]] = n + np.arange(len(new_rows))
    keys = pa.concat_arrays([old_keys, pa.array([key] * len(new_rows), pa.string())])
    items = pa.concat_arrays([old_items, values.take(pa.array(new_rows, pa.int64()))])
    return pa.MapArray.from_arrays(pa.array(starts, pa.int32()), keys.take(pa.array(index)),
                                   items.take(pa.array(index)), mask=pc.invert(maps.is_valid()))  # fmt: skip
