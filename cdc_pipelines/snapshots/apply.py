"""One day of changes as what the snapshot tables need: each key's net effect, the versions it opened
and closed, and the anomalies, with Spark operations only.

A sequential fold is not needed: every row change sets a key to a full after image or removes it, so
a key's state at the end of the day is its last effect after the table's last TRUNCATE of the day,
or, untouched, its previous row (the MERGE leaves it alone). Each event becomes one or two effects
(an UPDATE whose key changed removes the old key and sets the new one); whether the key existed just
before an effect (for the anomalies) is read from the key's previous effect of the day, unless a
TRUNCATE came between, and from the keys live at the start of the day otherwise. Every `set` effect
opens a version (history) that the key's next effect or the table's next TRUNCATE closes; a key live
at the start of the day has its open version closed by its first effect or the first TRUNCATE.
One window by key does the rest (a day's few TRUNCATEs reach every effect by broadcast, not by a
window over the whole table); nothing is collected but the list of tables that cannot be applied.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from cdc_pipelines.snapshots.keys import with_kafka_keys, with_keys
from cdc_pipelines.snapshots.order import event_position
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, TABLE

APPLIED_OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT", "TRUNCATE")
_EVENT_COLUMNS = ("dt", "pk_columns", "op", "event_id", "event_time", "before", "after", "column_types")
NO_PK = "no primary-key columns"


@dataclass(frozen=True)
class Applied:
    """What one day does to the snapshot tables, the day's anomalies, and the tables left as they were.

    - `net`: per touched key, its last effect after its table's last TRUNCATE (`kind` `set` with the
      row image and its `_cdc_` columns, or `del`); `_k` is the key as JSON text (`key_text`);
    - `truncated`: the tables with a TRUNCATE that day (`_t`): their keys not in `net` are removed;
    - `opened`: one row per version a `set` effect opened, `_cdc_start_at` / `_cdc_end_at` (null while live);
    - `closed`: keys live at the start of the day and the time their open version ended;
    - `live_before`: the keys live at the start of the day that the day touched, and every live key of a
      table it truncated (all the day needs of the tables' keys: a quiet day reads a few keys, however
      large the table).
    """

    net: DataFrame
    truncated: DataFrame
    opened: DataFrame
    closed: DataFrame
    anomalies: DataFrame
    skipped: list[dict]
    # the events applied (row ops and TRUNCATEs of the tables applied) with their table (`_t`) and place
    # in its order (`_pos`), only the columns the day needs: every other frame is built from this one
    events: DataFrame
    live_before: DataFrame
    # every effect with its key's neighbours and its table's TRUNCATEs (`_neighbours`): `net`, `opened`,
    # `closed` and the anomalies are filters and projections of it; None where the driver folded the day
    # (`fold.fold_day`: every frame is local data then, nothing to keep)
    ordered: DataFrame | None
    # what the writes need of each table's day (`run.table_figures`), where the driver folded the day
    tables: list[dict] | None = None


def table_id() -> Column:
    """One text per table, nulls kept apart from the text `null`."""
    return F.to_json(F.array(*[F.col(c) for c in TABLE]))


def key_of(image: str) -> Column:
    """The key values of `image` in `pk_columns` order (null where the image is absent)."""
    return F.when(
        F.col(image).isNotNull(), F.transform(F.col("pk_columns"), lambda c: F.try_element_at(F.col(image), c))
    )


def key_text(key: Column) -> Column:
    """The text a key is matched by in the snapshot tables (`_cdc_key`): its values as a JSON array."""
    return F.to_json(key)


def names_no_key() -> Column:
    """Whether an event is a row change that names no key columns (its table is skipped: `apply_day`)."""
    return F.col("op").isin("INSERT", "UPDATE", "DELETE", "UPSERT") & (F.coalesce(F.size("pk_columns"), F.lit(0)) <= 0)


def skipped_table(table: tuple, events: int) -> dict:
    return {**dict(zip(TABLE, table, strict=True)), "reason": NO_PK, "events": events}


def day_tables(changes: DataFrame) -> tuple[list[tuple], list[dict]]:
    """The tables `changes` has row events (or TRUNCATEs) for, and those of them with a row change that
    names no key columns (skipped: `apply_day`, in table order), from one aggregate: small metadata,
    collected."""
    rows = (
        changes.where(F.col("op").isin(*APPLIED_OPS))
        .groupBy(*TABLE)
        .agg(F.count(F.when(names_no_key(), 1)).alias("events"))
        .collect()
    )
    tables = [(tuple(r[c] for c in TABLE), r["events"]) for r in rows]
    skipped = [skipped_table(t, n) for t, n in sorted(tables, key=lambda t: table_order(t[0])) if n]
    return [t for t, _ in tables], skipped


def table_order(table: tuple) -> tuple:
    """A table's place when tables are listed: by name, a null part first."""
    return tuple(x or "" for x in table)


def effect_list() -> Column:
    """Each event's effects in order (`key`, `kind`, `sub`, `expect`): its key set or removed, and, for an
    UPDATE whose key changed, the new key set (`sub` 1); an effect without a key is left out."""
    op, before, after = F.col("op"), key_of("before"), key_of("after")
    moved = (op == "UPDATE") & before.isNotNull() & after.isNotNull() & (F.to_json(before) != F.to_json(after))
    first_key = F.when(op.isin("UPDATE", "DELETE"), F.coalesce(before, after)).otherwise(after)
    first = F.struct(
        first_key.alias("key"),
        F.when((op == "DELETE") | moved, "del").otherwise("set").alias("kind"),
        F.lit(0).alias("sub"),
        F.when(op.isin("UPDATE", "DELETE"), "present").when(op == "INSERT", "absent").alias("expect"),
    )
    second = F.when(moved, F.struct(after.alias("key"), F.lit("set").alias("kind"), F.lit(1).alias("sub"),
                                    F.lit(None).cast("string").alias("expect")))  # fmt: skip
    return F.filter(F.array(first, second), lambda e: e.isNotNull() & e["key"].isNotNull())


def _effects(events: DataFrame) -> DataFrame:
    exploded = events.where(F.col("op") != "TRUNCATE").select("*", F.explode(effect_list()).alias("_e"))
    return exploded.select(
        "_t", "_pos", *TABLE, "pk_columns", "op", "event_id", "event_time", "after", "column_types",
        F.col("_e.key").alias("key"), key_text(F.col("_e.key")).alias("_k"),
        *[F.col(f"_e.{c}").alias(c) for c in ("kind", "sub", "expect")],
    )  # fmt: skip


def _truncations(truncates: DataFrame) -> DataFrame:
    """Per table truncated that day, its TRUNCATEs in order (`_trs`: `_pos`, `sub` -1, `event_time`): a
    few rows, joined to every effect by broadcast, so an effect finds the TRUNCATEs before and after it
    without a window over its whole table."""
    mark = F.struct("_pos", F.lit(-1).alias("sub"), "event_time")
    return truncates.groupBy("_t").agg(F.array_sort(F.collect_list(mark)).alias("_trs"))


def _neighbours(effects: DataFrame, truncations: DataFrame, live_before: DataFrame) -> DataFrame:
    """Each effect with what its key's other effects and its table's TRUNCATEs say about it, in one pass
    per key: the key's previous effect (`_prev_kind`, `_prev_pos`), next (`_next`) and first (`_fe`) as
    `(_pos, sub, event_time)`, the table's last TRUNCATE before it (`_last_tr`), next after it
    (`_next_tr`) and last of the day (`_day_tr`), and whether the key was live at the start of the day
    (`_in_prev`). Joined to the live keys before the window: both are by key, so one shuffle serves both."""
    mark = F.struct("_pos", "sub", "event_time")
    by_key = Window.partitionBy("_t", "_k").orderBy("_pos", "sub")
    trs, pos = F.col("_trs"), F.col("_pos")
    live = live_before.select("_t", "_k", F.lit(True).alias("_in_prev"))
    return (
        effects.join(F.broadcast(truncations), "_t", "left")
        .join(live, ["_t", "_k"], "left")
        .withColumns({
            "_prev_kind": F.lag("kind").over(by_key),
            "_prev_pos": F.lag("_pos").over(by_key),
            "_next": F.lead(mark).over(by_key),
            "_fe": F.first(mark).over(by_key),  # the running frame's first row: the key's first effect
            "_last_tr": F.try_element_at(F.filter(trs, lambda t: t["_pos"] < pos), F.lit(-1)).getField("_pos"),
            "_next_tr": F.try_element_at(F.filter(trs, lambda t: t["_pos"] > pos), F.lit(1)),
            "_day_tr": F.try_element_at(trs, F.lit(-1)).getField("_pos"),
        })
        .drop("_trs")
    )  # fmt: skip


def _anomalies(effects: DataFrame) -> DataFrame:
    """The effects whose key was not where the op expects it: whether it existed just before the effect
    comes from the key's previous effect unless a TRUNCATE came between, else from the live keys."""
    prev_kind, prev_pos, last_tr = F.col("_prev_kind"), F.col("_prev_pos"), F.col("_last_tr")
    existed = (
        F.when(prev_kind.isNotNull() & (last_tr.isNull() | (last_tr < prev_pos)), prev_kind == "set")
        .when(last_tr.isNotNull(), F.lit(False))
        .otherwise(F.coalesce(F.col("_in_prev"), F.lit(False)))
    )
    expect = F.col("expect")
    kind = (
        F.when((expect == "present") & ~existed, F.concat(F.lower("op"), F.lit("_of_missing_key")))
        .when((expect == "absent") & existed, F.lit("insert_of_existing_key"))
    )  # fmt: skip
    detail = F.concat(F.lit("key "), F.col("_k"))
    return effects.select(*TABLE, kind.alias("kind"), "event_id", "op", detail.alias("detail")).where(
        F.col("kind").isNotNull()
    )


def _earlier(a: Column, b: Column) -> Column:
    """The earlier of two `(_pos, sub, event_time)` structs, either of which may be null."""
    return F.when(a.isNull(), b).when(b.isNull(), a).otherwise(F.least(a, b))


def _opened(effects: DataFrame) -> DataFrame:
    """A version per `set` effect, ended by the key's next effect or the table's next TRUNCATE."""
    end = _earlier(F.col("_next"), F.col("_next_tr")).getField("event_time")
    return effects.where(F.col("kind") == "set").select(
        *TABLE, "pk_columns", "_t", "_k", F.col("after").alias("row"), "column_types",
        F.col("op").alias("_cdc_op"), F.col("event_id").alias("_cdc_event_id"),
        F.col("event_time").alias("_cdc_start_at"), end.alias("_cdc_end_at"),
    )  # fmt: skip


def _live_before(effects: DataFrame, truncates: DataFrame, previous_keys: DataFrame) -> DataFrame:
    """The previous keys the day can change: those it has an effect on, and all of a truncated table's."""
    touched = effects.select("_t", "_k").distinct().withColumn("_touched", F.lit(True))
    truncated = truncates.select("_t").distinct().withColumn("_truncated", F.lit(True))
    return (
        previous_keys.join(touched, ["_t", "_k"], "left")
        .join(truncated, "_t", "left")
        .where(F.col("_touched") | F.col("_truncated"))
        .drop("_touched", "_truncated")
    )


def _closed(keyed: DataFrame, truncations: DataFrame, previous_keys: DataFrame) -> DataFrame:
    """Keys live at the start of the day that the day touched or truncated: when their version ended,
    at the key's first effect (`_fe`) or the table's first TRUNCATE, whichever came first."""
    first = _earlier(F.col("_fe"), F.try_element_at("_trs", F.lit(1)))
    return (
        previous_keys.join(keyed.select("_t", "_k", "_fe"), ["_t", "_k"], "left")
        .join(F.broadcast(truncations), "_t", "left")
        .where(first.isNotNull())
        .select(*TABLE, "_t", "_k", first.getField("event_time").alias("_cdc_end_at"))
    )


def applied_events(changes: DataFrame, skipped: list[dict]) -> DataFrame:
    """The events a day applies (row ops and TRUNCATEs of the tables not `skipped`) with their table
    (`_t`) and place in its order (`_pos`), only the columns the day needs."""
    skipped_ids = [F.to_json(F.array(*[F.lit(s[c]).cast("string") for c in TABLE])) for s in skipped]
    events = changes.where(F.col("op").isin(*APPLIED_OPS)).withColumn("_t", table_id())
    if skipped_ids:
        events = events.where(~F.col("_t").isin(*skipped_ids))
    return events.withColumn("_pos", event_position()).select(*TABLE, "_t", "_pos", *_EVENT_COLUMNS)


def keyed_changes(
    changes: DataFrame, keys: Mapping[str, Sequence[str]] | None = None, kafka_keys: Collection[str] | bool = ()
) -> DataFrame:
    """`changes` with the key columns of events that name none from `keys` or, for the `kafka_keys`
    topics, the Kafka message key (`keys.with_keys`, `keys.with_kafka_keys`)."""
    return with_kafka_keys(with_keys(changes, keys), kafka_keys)


def apply_day(
    previous_keys: DataFrame,
    changes: DataFrame,
    keys: Mapping[str, Sequence[str]] | None = None,
    kafka_keys: Collection[str] | bool = (),
    skipped: list[dict] | None = None,
) -> Applied:
    """What `changes` (one day of the canonical table) do to tables whose live keys are `previous_keys`.

    `previous_keys` has the table columns and `_k` (the `_cdc_key` of each live row). Tables whose
    row changes name no key columns (nor one in `keys`, nor, for the `kafka_keys` topics, in the Kafka
    message key: `keys.with_kafka_keys`) are not applied at all: their rows stay and they are listed
    in `skipped` (given when `day_tables` of the keyed changes found them already).
    DDL, heartbeats and transaction markers do not change rows.
    """
    changes = keyed_changes(changes, keys, kafka_keys)
    if skipped is None:
        skipped = day_tables(changes)[1]
    events = applied_events(changes, skipped)
    truncates = events.where(F.col("op") == "TRUNCATE").select(*TABLE, "_t", "_pos", "event_time")
    truncations = _truncations(truncates)
    effects = _effects(events)
    prev = _live_before(effects, truncates, previous_keys.select(*TABLE, "_k").withColumn("_t", table_id()))
    ordered = _neighbours(effects, truncations, prev)
    keyed = ordered.where(F.col("_next").isNull())  # each touched key's last effect
    net = keyed.where(F.col("_day_tr").isNull() | (F.col("_pos") > F.col("_day_tr"))).select(
        *TABLE, "pk_columns", "_t", "_k", "kind",
        F.when(F.col("kind") == "set", F.col("after")).alias("row"), "column_types",
        F.col("op").alias("_cdc_op"), F.col("event_time").alias("_cdc_event_time"),
        F.col("event_id").alias("_cdc_event_id"),
    )  # fmt: skip
    return Applied(
        net=net,
        truncated=truncates.select(*TABLE, "_t").distinct(),
        opened=_opened(ordered),
        closed=_closed(keyed, truncations, prev),
        anomalies=_anomalies(ordered).select(*ANOMALY_COLUMNS),
        skipped=skipped,
        events=events,
        live_before=prev,
        ordered=ordered,
    )
