"""Snapshots of a range of days: each day written into every table it changed (appended, its keys'
rows replaced, or MERGEd), recorded and summarised.

Days are applied in order; a day's cost follows its changes, not the tables' size (the writes touch
only the files holding the keys the day changed). A backfill or a rerun of a day that was already
applied, or that a later applied day follows, first restores the tables to their state at the start
of that day (`versions.restore_before`) and then applies it and every later applied day again, in
order, so the result equals a clean run. The old day's events that were not among those it applied
before are `late_event` anomalies (they arrived after a later day was applied), while a plain rerun
of the same events is not. A run that failed part way left no summary; the tables it had changed are
restored before the day is applied again (`versions.restore_unfinished`).

A day is folded in this process (`local_days.snapshot_day`): every day of the local engine, and on Spark's
a day of at most `apply.MAX_EVENTS_SETTING` events of a local lake, unless it truncates a table whose keys
Spark reads. Every other day Spark folds itself (`apply.apply_effects`, in `mapInArrow`): `snapshot_day`.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from cdc_pipelines.lake import delta_rs, io
from cdc_pipelines.lake.layout import CHANGES_DIR, SNAPSHOTS_DIR
from cdc_pipelines.model.meta_keys import DUPLICATE_OF
from cdc_pipelines.runtime.storage import is_uri, join, qualified
from cdc_pipelines.schema_changes.day import check_policies
from cdc_pipelines.schema_changes.policy import LENIENT
from cdc_pipelines.schema_changes.routes import Route
from cdc_pipelines.snapshots import apply, local_days, schema_day, small_tables, spark_tables
from cdc_pipelines.snapshots.apply import Applied, apply_effects, day_tables, effects_frame
from cdc_pipelines.snapshots.day import (
    ANOMALY_TEXT,
    IMAGE_FIELDS,
    TableDay,
    ddl_dataset,
    ddl_events,
    late_events,
    rows_before,
    table_days,
    table_rows,
    touched_tables,
)
from cdc_pipelines.snapshots.day_steps import finished_day, planned_schema, prepared_tables, write_table
from cdc_pipelines.snapshots.effects import ROW_OPS
from cdc_pipelines.snapshots.schema import ANOMALY_COLUMNS, ANOMALY_SCHEMA, APPLIED_SCHEMA, TABLE
from cdc_pipelines.snapshots.spark_tables import CONCURRENT_WRITES, matching
from cdc_pipelines.snapshots.store import ANOMALIES, APPLIED, applied_days, read_day
from cdc_pipelines.snapshots.values import ColumnPlan
from cdc_pipelines.snapshots.versions import TableVersion, restore_before

# the most events of the days a run applies (from the changes' Delta log) planned without adaptive execution
STATIC_PLAN_MAX_EVENTS = 50_000
ADAPTIVE = "spark.sql.adaptive.enabled"
# the events of a group of Spark's late-event cogroup (`_late_events`): a Python worker holds a group whole
LATE_GROUP_EVENTS = 200_000


def snapshots_root(lake_root: str | Path, out: str | Path | None = None) -> str:
    """`out`, or `snapshots/` in the lake: a local path or any URI Spark reaches."""
    return str(out) if out else join(lake_root, SNAPSHOTS_DIR)


def snapshot_days(
    spark: SparkSession | None,
    lake_root: str | Path,
    dts: Sequence[str],
    out: str | Path | None = None,
    topics: Sequence[str] | None = None,
    keys: Mapping[str, Sequence[str]] | None = None,
    kafka_keys: Collection[str] | bool = (),
    schema_changes: str | Mapping[str, str] = LENIENT,
    ddl_dialects: Mapping[str, str | None] | None = None,
    routes: Sequence[Route] | Mapping[str, Sequence[Route]] | None = None,
) -> dict[str, dict]:
    """Apply the days `dts` (and every later day already applied) of `topics` (all when None), on Spark or,
    without a `spark` session, on the local engine (`local_days`; a local lake whose tables delta-rs writes).

    `keys` names the key columns of tables whose format carries none (`{"db.table": [col, ...]}`);
    the events of the `kafka_keys` topics (True: all) left without take them from the Kafka message key.
    `schema_changes`: the policy of every topic, or by topic (`schema_changes.day`), with each topic's
    `ddl_dialects`; `routes`: sharded tables into one (`schema_changes.routes`), for every topic or by
    topic. Returns each applied day's summary (see `snapshot_day`), in order.
    """
    check_policies(schema_changes)
    root = snapshots_root(lake_root, out)
    if spark is not None and is_uri(root):  # as Hadoop names it: Delta refuses a table at `file:///x` once `file:/x`
        root = qualified(spark, root)
    before = applied_days(spark, root)
    days = sorted(set(dts) | {d for d in before if dts and d > min(dts)})
    restored = set(restore_before(spark, root, days[0])) if days and any(d >= days[0] for d in before) else set()
    policies = (schema_changes, ddl_dialects, schema_day.routes_by_topic(routes))
    if spark is None:
        return {
            day: local_days.snapshot_day(None, lake_root, root, day, topics, any(d > day for d in before), keys,
                                         kafka_keys, restored, policies)
            for day in days
        }  # fmt: skip
    # each day's events by the changes' Delta log (local lake only): the whole run's plan the days' sum,
    # a day's fold its own
    counts = delta_rs.partition_counts(join(lake_root, CHANGES_DIR), "dt")
    events = sum(counts.get(day, 0) for day in days) if counts is not None else None
    limit = apply.max_events(spark)
    applied = {}
    with static_plans(spark, events is not None and events <= STATIC_PLAN_MAX_EVENTS):
        for day in days:
            late = any(d > day for d in before)
            in_driver = limit > 0 and counts is not None and counts.get(day, 0) <= limit
            summary = local_days.snapshot_day(spark, lake_root, root, day, topics, late, keys, kafka_keys, restored,
                                              policies) if in_driver else None  # fmt: skip
            if summary is None:  # Spark folds it: too many events, or a TRUNCATE of a table Spark reads
                summary = snapshot_day(spark, lake_root, root, day, topics, late, keys, kafka_keys, restored, policies)
            applied[day] = summary
    return applied


@contextmanager
def static_plans(spark: SparkSession, small: bool) -> Iterator[None]:
    """Adaptive query execution off while `small` days are applied, unless the session was started with
    a setting of its own. Under it each shuffle stage of a query is a Spark job of its own, and a small
    day's queries are many and tiny: a quiet day on a 1M-row table ran 50 jobs instead of 82, 8.0 s
    instead of 9.8 s warm, and a snapshot test file 0.90x (docs/benchmarks-history.md, *keys replaced instead
    of MERGEd*). A large day keeps it: its joins and shuffles are sized at run time."""
    if not small or spark.sparkContext.getConf().contains(ADAPTIVE):
        yield
        return
    before = spark.conf.get(ADAPTIVE)
    spark.conf.set(ADAPTIVE, "false")
    try:
        yield
    finally:
        spark.conf.set(ADAPTIVE, before)


def day_changes(spark: SparkSession, lake_root: str | Path, day: str, topics: Sequence[str] | None) -> DataFrame:
    """The canonical events of `day` (none when the day was never decoded), redelivered ones left out:
    a change is applied once however often its topic delivered it."""
    events = io.read_canonical(spark, join(lake_root, CHANGES_DIR)).where(F.col("dt") == day)
    events = events.where(F.element_at("meta", F.lit(DUPLICATE_OF)).isNull())
    return events if topics is None else events.where(F.col("source_topic").isin(list(topics)))


def _touched(changes: DataFrame) -> dict[str, list[tuple]]:
    """The tables each topic's row changes name (`day.touched_tables`), collected."""
    return touched_tables(changes.select("source_topic", *TABLE, "op").where(F.col("op").isin(*ROW_OPS)).distinct()
                          .toArrow())  # fmt: skip


def _table_rows(changes: DataFrame, table: tuple) -> pa.Table:
    """A table's row changes of the day (`day.table_rows`), collected."""
    return table_rows(changes.where(matching(table)).select(*IMAGE_FIELDS).toArrow(), table)


def previous_keys(
    spark: SparkSession, root: str, tables: list[tuple]
) -> tuple[DataFrame, dict[tuple, list[ColumnPlan]]]:
    """The live keys (`_k`, and `_shard`: see `small_tables.live_keys`) of each of `tables` at the start of
    the day, and the source columns of each table there is: delta-rs's read without a Spark job (Delta's log
    replay is one per table), the others' by Spark (`spark_tables.spark_keys`)."""
    held, local = small_tables.held_keys(root, tables)
    keys, read = apply.local_frame(spark, local), spark_tables.spark_keys(spark, root, tables, held)
    return (keys if read is None else keys.unionByName(read)), held


def snapshot_day(
    spark: SparkSession,
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
    """`local_days.snapshot_day` of a day Spark folds (`apply.apply_effects`): write one day into each table
    it changed; record the versions, the day's anomalies and figures; the day's summary."""
    changes = day_changes(spark, lake_root, day, topics)
    # a day's few DDL events, collected
    ddl = ddl_events(changes.where(F.col("op") == "DDL").toArrow())
    _, dialects, _ = schema_changes
    rows = functools.cache(functools.partial(_table_rows, changes))
    schema = planned_schema(spark, root, day, ddl, schema_changes, rows, functools.partial(_touched, changes))
    previous_day = max((d for d in applied_days(spark, root) if d < day), default=None)
    effects = effects_frame(changes, keys, kafka_keys, schema.rewrite or None)
    tables, skipped = day_tables(effects)
    prepared_tables(spark, root, day, list(dict.fromkeys([*tables, *schema.tables])), restored, schema)
    live_keys, held = previous_keys(spark, root, tables)
    result = apply_effects(effects, live_keys, skipped, bool(schema.rewrite.routes))
    try:
        figures = apply.column_figures(result)
        invalid = not all(f.valid for f in figures.values())  # else no cell fails its type: not looked for again
        with ThreadPoolExecutor(max_workers=CONCURRENT_WRITES, thread_name_prefix="snapshot") as pool:
            ddl_rows, unread = ddl_dataset(ddl, day, dialects)
            ddl_rows = ddl_rows, pa.concat_tables([unread, schema.anomalies])
            side = pool.submit(_write_day_datasets, spark, root, day, ddl_rows, result, late, invalid)
            days = table_days(result.tables, figures, held)
            entries = _merge_tables(spark, root, day, result, days, rows_before(root, previous_day), pool)
            applied, anomalies = side.result()
        if anomalies is None:
            frame = read_day(spark, join(root, ANOMALIES), ANOMALY_SCHEMA, day)
            anomalies = [{**r.asDict(), "n": r["count"]} for r in frame.groupBy(*TABLE, "kind").count().collect()]
        return finished_day(spark, root, day, schema, entries, previous_day, skipped, applied, anomalies,
                            small_tables.commits_root(spark, root))  # fmt: skip
    finally:
        result.release()


def _write_day_datasets(
    spark: SparkSession,
    root: str,
    day: str,
    ddl: tuple[pa.Table, pa.Table],
    result: Applied,
    late: bool,
    invalid: bool,
) -> tuple[int, list[dict] | None]:
    """The day's anomalies, applied event ids and DDL (`small_tables.replace_datasets`): the events applied,
    and the anomalies when they were collected. The values failing their type are looked for only when the
    day has some (`invalid`); a `late` day's events not applied before are anomalies (`_late_events`). `ddl`:
    the day's `_ddl` rows and its `ddl_unread` anomalies (`day.ddl_dataset`)."""
    applied = result.events.count()
    anomalies = result.anomalies.unionByName(apply.invalid_cells(result)) if invalid else result.anomalies
    if late:
        before = read_day(spark, join(root, APPLIED), APPLIED_SCHEMA, day)
        anomalies = anomalies.unionByName(_late_events(result.events, before, applied))
    ddl_rows, unread = ddl
    if unread.num_rows:
        anomalies = anomalies.unionByName(apply.local_frame(spark, unread))
    anomalies = anomalies.select(*ANOMALY_COLUMNS).withColumn("dt", F.lit(day))
    datasets = (anomalies, result.events.select("event_id", "dt"), ddl_rows)
    return applied, small_tables.replace_datasets(spark, root, day, datasets, applied)


def _merge_tables(
    spark: SparkSession,
    root: str,
    day: str,
    result: Applied,
    days: list[TableDay],
    rows_before: Mapping[tuple, int],
    pool: ThreadPoolExecutor,
) -> list[TableVersion]:
    """Each changed table's day, the tables side by side in `pool`; the versions they made (in table order).
    The tables delta-rs writes (`small_tables.delta_rs_columns`) are written from one collect of all their
    rows (`small_tables.days_rows`), the others by Spark (`spark_tables.write_table`)."""
    held = sum(d.sets + d.opened + d.live for d in days) <= local_days.max_events(spark.conf)
    columns = pool.map(lambda d: small_tables.delta_rs_columns(spark, root, d, held), days)
    small = dict(zip([d.table for d in days], columns, strict=True))
    plans = {table: columns for table, columns in small.items() if columns is not None}
    rows = pool.submit(small_tables.days_rows, spark, result, plans) if plans else None
    writes = []
    for d in days:
        if small[d.table] is not None:
            writes.append(pool.submit(lambda d: write_table(root, day, d, rows.result()[d.table], small[d.table],
                                                            rows_before), d))  # fmt: skip
            continue
        match = matching(d.table)
        writes.append(pool.submit(spark_tables.write_table, spark, root, day, d, result.net.where(match),
                                  result.opened.where(match), result.closed.where(match), rows_before))  # fmt: skip
    return [w.result() for w in writes]


def _late_events(events: DataFrame, before: DataFrame, applied: int) -> DataFrame:
    """`day.late_events` of a day Spark folds, the day not collected: its events and the ids applied before
    cogrouped by a hash of the event id (groups of about `LATE_GROUP_EVENTS` of the `applied`), the rule run
    on each group's Arrow tables."""
    bucket = F.pmod(F.xxhash64("event_id"), F.lit(max(1, -(-applied // LATE_GROUP_EVENTS))))
    grouped = events.select(*TABLE, "event_id", "op").groupBy(bucket)
    return grouped.cogroup(before.select("event_id").groupBy(bucket)).applyInArrow(
        late_events, from_arrow_schema(ANOMALY_TEXT)
    )
