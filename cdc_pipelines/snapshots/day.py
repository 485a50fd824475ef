"""What a day does to the snapshot tables, as both engines' writers read it: the day's events (first
deliveries of the topics asked for), its DDL in the day's order, each changed table's `TableDay`, and the
day's summary. Plain Python over Arrow: `run` (Spark) and `local_days` (the local engine) run it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.model.meta_keys import DUPLICATE_OF
from cdc_pipelines.schema_changes.changes import UnreadDdl
from cdc_pipelines.snapshots.effects import ROW_OPS, places, table_label
from cdc_pipelines.snapshots.fold import KEY_LITERALS, table_order
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, DDL_COLUMNS, DDL_SCHEMA, LATE_DETAIL, LATE_EVENT, TABLE
from cdc_pipelines.snapshots.store import read_summary
from cdc_pipelines.snapshots.values import ColumnFigures, ColumnPlan, spark_type

# the anomalies' columns as Arrow text (`schema.ANOMALY_SCHEMA` without `dt`)
ANOMALY_TEXT = pa.schema([(c, pa.string()) for c in ANOMALY_COLUMNS])
DDL_FIELDS = ("event_id", "ddl", "db", "db_schema", "table_name", "meta", "source_topic", "event_time", "seq",
              "source_file", "source_line")  # fmt: skip


def first_deliveries(changes: pa.Table, topics: Sequence[str] | None) -> pa.Table:
    """The events of `changes` a snapshot applies: redelivered ones left out (a change is applied once
    however often its topic delivered it), of the `topics` asked for (all when None)."""
    wanted = pc.is_null(pc.map_lookup(changes.column("meta"), DUPLICATE_OF, "first"))
    if topics is not None:
        wanted = pc.and_(wanted, pc.is_in(changes.column("source_topic"), pa.array(list(topics), pa.string())))
    return changes if pc.all(wanted).as_py() is not False else changes.filter(wanted)  # a copy only where some go


def ddl_events(changes: pa.Table) -> list[dict]:
    """The day's DDL events (`DDL_FIELDS` of the `DDL` rows of `changes`: a day's few) in the day's order,
    each with its `place` in it (`places`), as `schema_changes.day` reads them."""
    rows = changes.filter(pc.equal(changes.column("op"), "DDL")).select(list(DDL_FIELDS))
    events = [{**r, "meta": dict(r["meta"]) if r["meta"] is not None else None} for r in rows.to_pylist()]
    ordered = sorted(zip(places(rows), events, strict=True), key=lambda pair: pair[0])
    return [e | {"place": p} for p, e in ordered]


def ddl_dataset(events: list[dict], day: str, dialects: Mapping[str, str | None] | None) -> tuple[pa.Table, pa.Table]:
    """The day's `_ddl` rows (`DDL_COLUMNS`, `unread`: why a statement of the DDL could not be read, null where
    every one was; `dt`) and a `ddl_unread` anomaly (`ANOMALY_TEXT`) for each DDL not read whole (its rows still
    apply), from its DDL events in the day's order (`ddl_events`) and each topic's `ddl_dialect:`."""
    rows, anomalies = [], []
    if events:  # sqlglot loaded only on a day that has DDL
        from cdc_pipelines.schema_changes.ddl import read_event
    for event in events:
        changes = read_event(event, (dialects or {}).get(event["source_topic"] or "")).changes
        unread = "; ".join(f"{c.reason}: {c.text}" for c in changes if isinstance(c, UnreadDdl)) or None
        rows.append({**{c: event[c] for c in DDL_COLUMNS}, "unread": unread, "dt": day})
        if unread:
            anomalies.append({**{c: event[c] for c in TABLE}, "kind": "ddl_unread", "event_id": event["event_id"],
                              "op": "DDL", "detail": unread})  # fmt: skip
    return pa.Table.from_pylist(rows, delta_rs.arrow_schema(DDL_SCHEMA)), pa.Table.from_pylist(anomalies, ANOMALY_TEXT)


def late_events(events: pa.Table, before: pa.Table | None) -> pa.Table:
    """The `late_event` anomalies (`ANOMALY_TEXT`) of a day applied again after a later day: its events applied now
    (`TABLE`, `event_id`, `op`) whose id is not among those a run of it before applied (`before`; None: no run
    recorded), so a plain rerun has none. Spark runs it per group of a cogroup by the id's hash (`run`)."""
    if before is not None:
        ids = before.column("event_id").cast(events.schema.field("event_id").type)
        events = events.filter(pc.invert(pc.is_in(events.column("event_id"), ids)))
    n = events.num_rows
    columns = {c: events.column(c) for c in (*TABLE, "event_id", "op")}
    late = pa.table(columns | {"kind": pa.array([LATE_EVENT] * n), "detail": pa.array([LATE_DETAIL] * n)})
    return late.select(list(ANOMALY_COLUMNS)).cast(ANOMALY_TEXT)


IMAGE_FIELDS = (*TABLE, "op", "event_time", "seq", "source_file", "source_line", "meta", "event_id", "before",
                "after")  # fmt: skip


def table_rows(rows: pa.Table, table: tuple) -> pa.Table:
    """The row changes of `table` among `rows` (`IMAGE_FIELDS`), each with its `place`, in the day's order:
    what `image_names` and `carrying` read of a table a DDL names."""
    mine = pc.and_(pc.equal(rows.column("table_name"), table[2]), pc.not_equal(rows.column("op"), "DDL"))
    for column, value in zip(TABLE[:2], table[:2], strict=True):
        mine = pc.and_kleene(mine, pc.is_null(rows.column(column)) if value is None else
                             pc.equal(rows.column(column), value))  # fmt: skip
    own = rows.filter(mine).select(list(IMAGE_FIELDS))
    return own.append_column("place", pa.array(places(own), pa.binary())).sort_by("place")


def image_names(rows: pa.Table, before: bytes | None = None) -> list[str]:
    """The column names a table's rows (`table_rows`) carry in their images (before the place `before`: its
    columns as the rows knew them when its first DDL of the day came)."""
    own = rows if before is None else rows.filter(pc.less(rows.column("place"), pa.scalar(before, pa.binary())))
    names = [pc.unique(chunk.keys).to_pylist() for image in ("before", "after") for chunk in own.column(image).chunks]
    return list(dict.fromkeys(n for part in names for n in part))


def carrying(rows: pa.Table, column: str, after: bytes | None = None) -> list[tuple[str, str]]:
    """The event ids and ops of a table's rows (`table_rows`; after the place `after`) whose after image (or,
    for a DELETE, before image) carries `column`: rows that disagree with a DROP COLUMN made there."""
    own = rows if after is None else rows.filter(pc.greater(rows.column("place"), pa.scalar(after, pa.binary())))
    image = pc.if_else(pc.is_valid(own.column("after")), own.column("after"), own.column("before")).combine_chunks()
    offsets = image.offsets.to_numpy()
    owner = np.repeat(np.arange(len(image)), np.diff(offsets))
    hits = pc.equal(image.keys.slice(offsets[0], offsets[-1] - offsets[0]), column).to_numpy(zero_copy_only=False)
    found = own.take(pa.array(np.unique(owner[hits]), pa.int64()))
    return list(zip(found.column("event_id").to_pylist(), found.column("op").to_pylist(), strict=True))


def touched_tables(rows: pa.Table) -> dict[str, list[tuple]]:
    """The tables each topic's row changes name, from the day's `source_topic`, `TABLE` and `op`."""
    rows = rows.filter(pc.is_in(rows.column("op"), pa.array(ROW_OPS)))
    found = rows.select(["source_topic", *TABLE]).group_by(["source_topic", *TABLE]).aggregate([]).to_pylist()
    out: dict[str, list[tuple]] = {}
    for r in found:
        out.setdefault(r["source_topic"] or "", []).append(tuple(r[c] for c in TABLE))
    return out


def rows_before(root: str, previous_day: str | None) -> dict[tuple, int]:
    """Each table's live rows at the start of the day, as the previous applied day's summary gives them."""
    summary = read_summary(root, previous_day) if previous_day else None
    return {tuple(t[c] for c in TABLE): t["rows"] for t in (summary or {}).get("per_table", {}).values()}


@dataclass(frozen=True)
class TableDay:
    """What a day does to one table, as its writes need it."""

    table: tuple
    columns: list[ColumnPlan]  # the day's columns and their types
    pk_columns: list[str]
    truncated: bool
    sets: int  # keys the day leaves set (rows a MERGE of only inserts adds)
    opened: int  # versions the day opens (rows its history gains)
    live: int  # the day's keys live before it (rows of its current table the day replaces or removes)
    keys: list[str] | None  # the day's keys (`_cdc_key`) when at most `KEY_LITERALS`: named in its writes
    earliest_end: int | None  # the earliest end (epoch microseconds) of a version the day opens or closes
    held: list[ColumnPlan] | None  # the table's columns at the start of the day; None: no table yet


def table_days(
    tables: list[dict], figures: Mapping[tuple[tuple, str], ColumnFigures], held: Mapping[tuple, list[ColumnPlan]]
) -> list[TableDay]:
    """Each table the day changed or truncated (`tables`: the fold's figures, `fold.TableFigures.as_dict`),
    in table order (`figures`: `values.figure_rows` of the day's versions; `held`: the columns of the tables
    there at the start of the day)."""
    plans: dict[tuple, list[ColumnPlan]] = {}
    for (table, column), found in figures.items():
        plans.setdefault(table, []).append(ColumnPlan(column, spark_type(found)))
    days = []
    for r in tables:
        t = tuple(r[c] for c in TABLE)
        keys = list(r["key_list"] or []) if r["keys"] <= KEY_LITERALS else None
        days.append(TableDay(t, plans.get(t, []), list(r["pk_columns"] or []), r["truncated"], r["sets"], r["opened"],
                             r["live"], keys, r["earliest_end"], held=held.get(t)))  # fmt: skip
    return sorted(days, key=lambda d: table_order(d.table))


def summary(
    root: str, day: str, previous_day: str | None, skipped: list, applied: int, anomalies: list[dict], versions: list
) -> dict:
    """The day's figures; `per_table` names every table's two Delta tables and their versions at the end
    of the day (`versions`: `versions.as_of` the day). `anomalies`: one row per anomaly, or per table and
    kind with its count (`n`)."""
    counts: dict[tuple, dict[str, int]] = {}
    for r in anomalies:
        kinds = counts.setdefault(tuple(r[c] for c in TABLE), {})
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + r.get("n", 1)
    at_end = {e.table: e for e in versions}
    tables = {}
    for table in sorted(set(at_end) | set(counts), key=table_order):
        names = dict(zip(TABLE, table, strict=True))
        entry = at_end.get(table)
        tables[table_label(table)] = {
            **names,
            "rows": entry.rows if entry else 0,
            "anomalies": counts.get(table, {}),
            **({k: getattr(entry, k) for k in ("current", "history", "current_version", "history_version")}
               if entry else {}),
        }  # fmt: skip
    return {
        "dt": day,
        "previous_dt": previous_day,
        "tables": sum(1 for t in tables.values() if t["rows"]),
        "rows": sum(t["rows"] for t in tables.values()),
        "applied": applied,
        "anomalies": sum(sum(k.values()) for k in counts.values()),
        "skipped_tables": [{"table": table_label([s[c] for c in TABLE]), **s} for s in skipped],
        "per_table": tables,
        "path": root,
    }
