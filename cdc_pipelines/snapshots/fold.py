"""A small day's fold in the driver: what `apply.apply_day` finds with a window by key, found here by one
walk over the day's events in order, its frames handed back to Spark as local data.

Why: `apply_day`'s frames are a window, joins and a broadcast that Spark plans and runs in some 20
small jobs however few the events, and the writes' figures of each table one more aggregate: 3-4 s
of a quiet day on this machine (docs/benchmarks-history.md, *the driver's fold*). Spark still computes every
value the frames hold (the events' order, their keys as `_cdc_key` text, their effects, and later their types), in one
sorted collect; only each effect's neighbours (its key's previous, next and first effect, its
table's TRUNCATEs around it) and the tables' counts are found here, so none of Spark's semantics is
written twice. `tests/snapshots/test_fold.py` holds the two folds to the same frames and figures on
generated days."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.snapshots.apply import (
    APPLIED_OPS,
    Applied,
    effect_list,
    key_text,
    names_no_key,
    skipped_table,
    table_id,
    table_order,
)
from cdc_pipelines.snapshots.order import event_position
from cdc_pipelines.snapshots.schema import TABLE
from cdc_pipelines.snapshots.tables import KEY_LITERALS

# the setting of the most events (the day's changes, all topics) folded in the driver; 0: Spark folds every day
MAX_EVENTS_SETTING = "cdc.snapshots.driver_fold_max_events"
# 50,000 events with their images are some 100 MB in the driver, the bound the plans without adaptive
# execution already keep (`run.STATIC_PLAN_MAX_EVENTS`)
DEFAULT_MAX_EVENTS = 50_000
_DAY_COLUMNS = (*TABLE, "_t", "dt", "pk_columns", "op", "event_id", "event_time", "after", "column_types")


def max_events(spark: SparkSession) -> int:
    return int(spark.conf.get(MAX_EVENTS_SETTING, str(DEFAULT_MAX_EVENTS)))


@dataclass(frozen=True)
class _Effect:
    row: int  # the event's row in the day
    order: int  # its place in the day: 2 * row + sub (a TRUNCATE is at 2 * row)
    table: str  # `_t`
    key: str  # `_k`
    kind: str  # set / del
    expect: str | None  # present / absent / None


def _earlier(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def collect_day(changes: DataFrame) -> pa.Table:
    """The day's events that change rows (row ops and TRUNCATEs) in their order, `changes` keyed
    (`apply.keyed_changes`), with their table (`_t`), effects (`_e`: `_k`, `kind`, `expect`) and whether
    they name no key (`_no_key`): one job, the day sorted in one partition (a small day needs no range
    partitioning's sampling job)."""
    events = changes.where(F.col("op").isin(*APPLIED_OPS)).withColumn("_t", table_id())
    effects = F.transform(effect_list(), lambda e: F.struct(key_text(e["key"]).alias("_k"), e["kind"], e["expect"]))
    effects = F.when(F.col("op") != "TRUNCATE", effects)
    ordered = events.withColumn("_pos", event_position()).coalesce(1).sortWithinPartitions("_pos")
    return ordered.select(*_DAY_COLUMNS, effects.alias("_e"), names_no_key().alias("_no_key")).toArrow()


def _table_names(rows: pa.Table) -> list[tuple]:
    """Each row's table as its `TABLE` values."""
    return list(zip(*(rows[c].to_pylist() for c in TABLE), strict=True))


def day_tables(day: pa.Table) -> tuple[list[tuple], list[dict]]:
    """`apply.day_tables` of a collected day (`collect_day`)."""
    no_key: dict[tuple, int] = {}
    for table, flag in zip(_table_names(day), day["_no_key"].to_pylist(), strict=True):
        no_key[table] = no_key.get(table, 0) + flag
    return list(no_key), [skipped_table(t, no_key[t]) for t in sorted(no_key, key=table_order) if no_key[t]]


def _live_keys(previous_keys: DataFrame, touched: set[tuple[str, str]], truncated: set[str]) -> pa.Table:
    """The keys live at the start of the day that the day can change (`TABLE`, `_k`, `_t`): those it
    touches and every key of a table it truncates. The touched keys are named as literals where there are
    few (Delta skips the current tables' files by them), else joined as local rows."""
    live = previous_keys.select(*TABLE, "_k").withColumn("_t", table_id())
    keys = sorted({k for _, k in touched})
    wanted = F.col("_t").isin(sorted(truncated)) if truncated else F.lit(False)
    if len(keys) <= KEY_LITERALS:
        found = live.where(wanted | F.col("_k").isin(keys)) if keys or truncated else None
    else:
        spark = previous_keys.sparkSession
        pairs = spark.createDataFrame(pa.table({"_t": [t for t, _ in touched], "_k": [k for _, k in touched]}))
        found = live.join(pairs.withColumn("_touched", F.lit(True)), ["_t", "_k"], "left")
        found = found.where(wanted | F.col("_touched").isNotNull()).drop("_touched")
    if found is None:
        return pa.table({c: pa.array([], pa.string()) for c in (*TABLE, "_k", "_t")})
    rows = found.toArrow()
    pairs = zip(rows["_t"].to_pylist(), rows["_k"].to_pylist(), strict=True)
    pick = [(t, k) in touched or t in truncated for t, k in pairs]
    return rows.filter(pa.array(pick, pa.bool_()))


def fold_day(
    previous_keys: DataFrame, day: pa.Table, skipped: list[dict], spark_tables: Collection[tuple]
) -> Applied | None:
    """`apply_day(previous_keys, changes, skipped=skipped)` for a day small enough to collect (`day`:
    `collect_day(changes)`), or None where the day truncates one of `spark_tables` (tables whose keys
    Spark reads): every key of a truncated table would be collected."""
    spark = previous_keys.sparkSession
    if skipped:
        gone = {tuple(s[c] for c in TABLE) for s in skipped}
        day = day.filter(pa.array([t not in gone for t in _table_names(day)], pa.bool_()))
    ops, tables = day["op"].to_pylist(), day["_t"].to_pylist()
    truncates: dict[str, list[int]] = {}
    by_key: dict[tuple[str, str], list[_Effect]] = {}
    for row, (op, table, effects) in enumerate(zip(ops, tables, day["_e"].to_pylist(), strict=True)):
        if op == "TRUNCATE":
            truncates.setdefault(table, []).append(2 * row)
            continue
        for sub, e in enumerate(effects):
            by_key.setdefault((table, e["_k"]), []).append(_Effect(row, 2 * row + sub, table, e["_k"], e["kind"],
                                                                   e["expect"]))  # fmt: skip
    truncated = day.take(pa.array([orders[0] // 2 for orders in truncates.values()], pa.int64())).select([*TABLE, "_t"])
    if set(_table_names(truncated)) & set(spark_tables):
        return None
    live = _live_keys(previous_keys, set(by_key), set(truncates))
    live_set = set(zip(live["_t"].to_pylist(), live["_k"].to_pylist(), strict=True))

    net, opened, ends, anomalies = [], [], [], []
    for effects in by_key.values():
        for i, e in enumerate(effects):
            trs = truncates.get(e.table, ())
            at = bisect_left(trs, e.order)
            last_tr, next_tr = trs[at - 1] if at else None, trs[at] if at < len(trs) else None
            previous = effects[i - 1] if i else None
            following = effects[i + 1] if i + 1 < len(effects) else None
            if previous is not None and (last_tr is None or last_tr < previous.order):
                existed = previous.kind == "set"
            else:
                existed = last_tr is None and (e.table, e.key) in live_set
            if e.expect == "present" and not existed:
                anomalies.append((e, ops[e.row].lower() + "_of_missing_key"))
            elif e.expect == "absent" and existed:
                anomalies.append((e, "insert_of_existing_key"))
            if e.kind == "set":
                opened.append(e)
                ends.append(_earlier(following.order if following else None, next_tr))
            if following is None and (not trs or e.order > trs[-1]):
                net.append(e)
    closed_rows, closed_ends = [], []
    for row, (table, key) in enumerate(zip(live["_t"].to_pylist(), live["_k"].to_pylist(), strict=True)):
        effects = by_key.get((table, key))
        first = _earlier(effects[0].order if effects else None, truncates.get(table, [None])[0])
        if first is not None:
            closed_rows.append(row)
            closed_ends.append(first)

    def take(effects: list[_Effect], name: str, where: Callable[[_Effect], bool] = lambda e: True) -> pa.Array:
        return pc.take(day[name], pa.array([e.row if where(e) else None for e in effects], pa.int64()))

    def times(orders: list[int | None]) -> pa.Array:
        return pc.take(day["event_time"], pa.array([o // 2 if o is not None else None for o in orders], pa.int64()))

    def text(values: list) -> pa.Array:
        return pa.array(values, pa.string())

    def local(columns: dict[str, pa.Array]) -> DataFrame:
        return spark.createDataFrame(pa.table(columns))

    def keyed(effects: list[_Effect]) -> dict[str, pa.Array]:
        return {**{c: take(effects, c) for c in (*TABLE, "pk_columns", "_t")}, "_k": text([e.key for e in effects])}

    closed = live.take(pa.array(closed_rows, pa.int64()))
    micros = day["event_time"].cast(pa.int64()).to_pylist()
    table_names = dict(zip(tables, _table_names(day), strict=True))
    figures: dict[str, dict] = {}

    def of(table: str) -> dict:
        return figures.setdefault(table, {**dict(zip(TABLE, table_names[table], strict=True)), "pk_columns": None,
                                          "sets": 0, "truncated": table in truncates, "live": 0, "opened": 0,
                                          "keys": 0, "key_list": [], "earliest_end": None})  # fmt: skip

    def ended(table: str, order: int | None) -> None:
        f, end = of(table), micros[order // 2] if order is not None else None
        if end is not None:  # a version ended at no time (an event without one) counts as Spark's `min` counts it
            f["earliest_end"] = end if f["earliest_end"] is None else min(f["earliest_end"], end)

    pk_columns = day["pk_columns"].to_pylist()
    for e in net:
        f = of(e.table)
        f["pk_columns"] = f["pk_columns"] or pk_columns[e.row]
        f["sets"], f["keys"] = f["sets"] + (e.kind == "set"), f["keys"] + 1
        f["key_list"].append(e.key)
    for table in truncates:
        of(table)
    for table in live["_t"].to_pylist():
        of(table)["live"] += 1
    for e, order in zip(opened, ends, strict=True):
        of(e.table)["opened"] += 1
        ended(e.table, order)
    for table, order in zip(closed["_t"].to_pylist(), closed_ends, strict=True):
        ended(table, order)
    for f in figures.values():
        f["key_list"] = sorted(f["key_list"])[: KEY_LITERALS + 1] or None  # as Spark's `min_by` of no row
    anomalous = [e for e, _ in anomalies]
    return Applied(
        net=local(
            {
                **keyed(net),
                "kind": text([e.kind for e in net]),
                "row": take(net, "after", lambda e: e.kind == "set"),
                "column_types": take(net, "column_types"),
                "_cdc_op": take(net, "op"),
                "_cdc_event_time": take(net, "event_time"),
                "_cdc_event_id": take(net, "event_id"),
            }
        ),  # fmt: skip
        truncated=local({c: truncated[c] for c in (*TABLE, "_t")}),
        opened=local(
            {
                **keyed(opened),
                "row": take(opened, "after"),
                "column_types": take(opened, "column_types"),
                "_cdc_op": take(opened, "op"),
                "_cdc_event_id": take(opened, "event_id"),
                "_cdc_start_at": take(opened, "event_time"),
                "_cdc_end_at": times(ends),
            }
        ),  # fmt: skip
        closed=local({**{c: closed[c] for c in (*TABLE, "_t", "_k")}, "_cdc_end_at": times(closed_ends)}),
        anomalies=local(
            {
                **{c: take(anomalous, c) for c in TABLE},
                "kind": text([kind for _, kind in anomalies]),
                "event_id": take(anomalous, "event_id"),
                "op": take(anomalous, "op"),
                "detail": text(["key " + e.key for e in anomalous]),
            }
        ),  # fmt: skip
        skipped=skipped,
        events=local({c: day[c] for c in (*TABLE, "_t", "dt", "op", "event_id")}),
        live_before=local({c: live[c] for c in (*TABLE, "_k", "_t")}),
        ordered=None,
        tables=list(figures.values()),
    )
