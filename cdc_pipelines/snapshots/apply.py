"""Folding one day of changes into the previous snapshot, with Spark operations only.

A sequential fold is not needed: every row change sets a key to a full after image or removes it, so
a key's state at the end of the day is its last effect after the table's last TRUNCATE of the day,
or, untouched, its previous row. Each event becomes one or two effects (an UPDATE whose key changed
removes the old key and sets the new one); whether the key existed just before an effect (for the
anomalies) is read from the key's previous effect of the day, unless a TRUNCATE came between, and
from the previous snapshot otherwise. Windows by table and by key do the rest; nothing is collected
but the list of tables that cannot be applied.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from cdc_pipelines.snapshots.order import event_order
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, STATE_COLUMNS, TABLE

APPLIED_OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT", "TRUNCATE")
NO_PK = "no primary-key columns"


@dataclass(frozen=True)
class Applied:
    """The new snapshot (state rows), the day's anomalies, and the tables left as they were."""

    state: DataFrame
    anomalies: DataFrame
    skipped: list[dict]
    events: DataFrame  # the events applied (row ops and TRUNCATEs of the tables applied)


def table_id() -> Column:
    """One text per table, nulls kept apart from the text `null`."""
    return F.to_json(F.array(*[F.col(c) for c in TABLE]))


def key_of(image: str) -> Column:
    """The key values of `image` in `pk_columns` order (null where the image is absent)."""
    return F.when(
        F.col(image).isNotNull(), F.transform(F.col("pk_columns"), lambda c: F.try_element_at(F.col(image), c))
    )


def skipped_tables(changes: DataFrame) -> list[dict]:
    """Tables with a row change that names no key columns: small metadata, collected."""
    no_pk = F.coalesce(F.size("pk_columns"), F.lit(0)) <= 0
    rows = (
        changes.where(F.col("op").isin("INSERT", "UPDATE", "DELETE", "UPSERT") & no_pk)
        .groupBy(*TABLE)
        .agg(F.count("*").alias("events"))
        .collect()
    )
    return [{**{c: r[c] for c in TABLE}, "reason": NO_PK, "events": r["events"]} for r in rows]


def _effects(events: DataFrame) -> DataFrame:
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
    exploded = events.where(op != "TRUNCATE").select(
        "*", F.explode(F.filter(F.array(first, second), lambda e: e.isNotNull())).alias("_e")
    )
    return exploded.select(
        "_t", "_pos", *TABLE, "pk_columns", "op", "event_id", "event_time", "after", "column_types",
        F.col("_e.key").alias("key"), F.to_json("_e.key").alias("_k"),
        *[F.col(f"_e.{c}").alias(c) for c in ("kind", "sub", "expect")],
    ).where(F.col("key").isNotNull())  # fmt: skip


def _existed(effects: DataFrame, truncates: DataFrame, previous_keys: DataFrame) -> DataFrame:
    """Each effect with `existed`: whether its key was in the table just before it."""
    by_key = Window.partitionBy("_t", "_k").orderBy("_pos", "sub")
    effects = effects.withColumns({"_prev_kind": F.lag("kind").over(by_key), "_prev_pos": F.lag("_pos").over(by_key)})
    marks = truncates.select("_t", "_pos", F.lit(-1).alias("sub"), F.col("_pos").alias("_tr"))
    by_table = Window.partitionBy("_t").orderBy("_pos", "sub").rowsBetween(Window.unboundedPreceding, 0)
    with_tr = (
        effects.unionByName(marks, allowMissingColumns=True)
        .withColumn("_last_tr", F.max("_tr").over(by_table))
        .where(F.col("_tr").isNull())
    )
    prev_kind, prev_pos, last_tr = F.col("_prev_kind"), F.col("_prev_pos"), F.col("_last_tr")
    existed = (
        F.when(prev_kind.isNotNull() & (last_tr.isNull() | (last_tr < prev_pos)), prev_kind == "set")
        .when(last_tr.isNotNull(), F.lit(False))
        .otherwise(F.coalesce(F.col("_in_prev"), F.lit(False)))
    )
    return with_tr.join(previous_keys, ["_t", "_k"], "left").withColumn("existed", existed)


def _anomalies(effects: DataFrame) -> DataFrame:
    expect, existed = F.col("expect"), F.col("existed")
    kind = (
        F.when((expect == "present") & ~existed, F.concat(F.lower("op"), F.lit("_of_missing_key")))
        .when((expect == "absent") & existed, F.lit("insert_of_existing_key"))
    )  # fmt: skip
    detail = F.concat(F.lit("key "), F.col("_k"))
    return effects.select(*TABLE, kind.alias("kind"), "event_id", "op", detail.alias("detail")).where(
        F.col("kind").isNotNull()
    )


def apply_day(previous: DataFrame, changes: DataFrame) -> Applied:
    """The snapshot after `changes` (one day of the canonical table) are applied to `previous`.

    `previous` has the state columns (`schema.STATE_SCHEMA`, without `dt`). Tables whose row changes
    name no key columns are not applied at all: their previous rows stay and they are listed in
    `skipped`. DDL, heartbeats and transaction markers do not change rows.
    """
    skipped = skipped_tables(changes)
    skipped_ids = [F.to_json(F.array(*[F.lit(s[c]).cast("string") for c in TABLE])) for s in skipped]
    events = changes.where(F.col("op").isin(*APPLIED_OPS)).withColumn("_t", table_id())
    if skipped_ids:
        events = events.where(~F.col("_t").isin(*skipped_ids))
    events = events.withColumn("_pos", F.row_number().over(Window.partitionBy("_t").orderBy(*event_order())))
    truncates = events.where(F.col("op") == "TRUNCATE").select("_t", "_pos")
    last_truncate = truncates.groupBy("_t").agg(F.max("_pos").alias("_last_tr"))
    prev = previous.select(*STATE_COLUMNS).withColumns({"_t": table_id(), "_k": F.to_json("key")})

    effects = _existed(_effects(events), truncates, prev.select("_t", "_k", F.lit(True).alias("_in_prev")))
    latest = Window.partitionBy("_t", "_k").orderBy(F.desc("_pos"), F.desc("sub"))
    last = effects.withColumn("_n", F.row_number().over(latest)).where(F.col("_n") == 1).drop("_last_tr")
    survivors = (
        last.join(last_truncate, "_t", "left")
        .where((F.col("kind") == "set") & (F.col("_last_tr").isNull() | (F.col("_pos") > F.col("_last_tr"))))
        .select(
            *TABLE,
            "pk_columns",
            "key",
            F.col("after").alias("row"),
            "column_types",
            F.col("op").alias("_cdc_op"),
            F.col("event_time").alias("_cdc_event_time"),
            F.col("event_id").alias("_cdc_event_id"),
        )  # fmt: skip
    )
    kept = prev.join(last_truncate, "_t", "left_anti").join(last.select("_t", "_k"), ["_t", "_k"], "left_anti")
    state = kept.select(*STATE_COLUMNS).unionByName(survivors.select(*STATE_COLUMNS))
    anomalies = _anomalies(effects).select(*ANOMALY_COLUMNS)
    return Applied(state=state, anomalies=anomalies, skipped=skipped, events=events.drop("_t", "_pos"))
