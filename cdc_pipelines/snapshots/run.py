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
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.lake import delta_rs, io
from cdc_pipelines.lake.layout import CHANGES_DIR, SNAPSHOTS_DIR
from cdc_pipelines.model.meta_keys import DUPLICATE_OF
from cdc_pipelines.runtime.storage import is_uri, join, qualified
from cdc_pipelines.schema_changes.day import check_policies
from cdc_pipelines.schema_changes.policy import LENIENT
from cdc_pipelines.schema_changes.routes import SOURCE_TABLE_COLUMN, Route
from cdc_pipelines.snapshots import apply, local_days, schema_day, small_tables
from cdc_pipelines.snapshots.apply import Applied, apply_effects, day_tables, effects_frame
from cdc_pipelines.snapshots.day import (
    IMAGE_FIELDS,
    TableDay,
    ddl_dataset,
    ddl_events,
    rows_before,
    table_days,
    table_rows,
    touched_tables,
)
from cdc_pipelines.snapshots.day_steps import finished_day, planned_schema, prepared_tables, write_table
from cdc_pipelines.snapshots.effects import ROW_OPS, table_text
from cdc_pipelines.snapshots.fold import KEY_LITERALS
from cdc_pipelines.snapshots.schema import (
    ANOMALY_COLUMNS,
    ANOMALY_SCHEMA,
    APPLIED_SCHEMA,
    DDL_SCHEMA,
    LATE_DETAIL,
    LATE_EVENT,
    TABLE,
)
from cdc_pipelines.snapshots.store import (
    ANOMALIES,
    APPLIED,
    DDL,
    applied_days,
    read_day,
    replace_day,
    table_paths,
)
from cdc_pipelines.snapshots.tables import (
    append_current,
    append_history,
    merge_current,
    merge_history,
    prepare,
    replace_current,
    replace_history,
    source_columns,
)
from cdc_pipelines.snapshots.values import ColumnPlan
from cdc_pipelines.snapshots.versions import TableVersion, restore_before, version_at_end

# tables whose writes run side by side (each its current and history table on two threads: up to twice
# as many Spark jobs): a MERGE of a small day is mostly the driver's work (its plans, Delta's log, the
# commit), so the tables' MERGEs and the day's datasets overlap even on 2 cores
CONCURRENT_WRITES = 4
# the most events of the days a run applies (from the changes' Delta log) planned without adaptive execution
STATIC_PLAN_MAX_EVENTS = 50_000
ADAPTIVE = "spark.sql.adaptive.enabled"
R = TypeVar("R")


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
            day: local_days.snapshot_day(lake_root, root, day, topics, any(d > day for d in before), keys, kafka_keys,
                                         restored, policies)
            for day in days
        }  # fmt: skip
    # each day's events by the changes' Delta log (local lake only): the whole run's plan the days' sum,
    # a day's fold its own
    counts = delta_rs.partition_counts(join(lake_root, CHANGES_DIR), "dt")
    events = sum(counts.get(day, 0) for day in days) if counts is not None else None
    limit = apply.max_events(spark)
    with static_plans(spark, events is not None and events <= STATIC_PLAN_MAX_EVENTS):
        return {
            day: snapshot_day(
                spark, lake_root, root, day, topics, late=any(d > day for d in before), keys=keys,
                kafka_keys=kafka_keys, restored=restored,
                fold_in_driver=limit > 0 and counts is not None and counts.get(day, 0) <= limit,
                schema_changes=policies,
            )
            for day in days
        }  # fmt: skip


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


def day_changes(
    spark: SparkSession, lake_root: str | Path, day: str, topics: Sequence[str] | None, small: bool = False
) -> tuple[DataFrame | None, pa.Table | None]:
    """The canonical events of `day` (none when the day was never decoded), redelivered ones left out:
    a change is applied once however often its topic delivered it. A `small` day of a local lake is read
    by delta-rs and returned as Arrow alone (`local_days.day_changes`): Spark's load of the changes' log
    and its listing of the day's files cost a quiet day 0.4-0.6 s."""
    if small:
        return None, local_days.day_changes(lake_root, day, topics)
    events = io.read_canonical(spark, join(lake_root, CHANGES_DIR)).where(F.col("dt") == day)
    events = events.where(F.element_at("meta", F.lit(DUPLICATE_OF)).isNull())
    return (events if topics is None else events.where(F.col("source_topic").isin(list(topics)))), None


def _live_keys(previous: DataFrame, touched: set[tuple[str, str]], truncated: set[str]) -> pa.Table:
    """The keys live at the start of the day that the day can change (`TABLE`, `_t`, `_k`): those it
    touches and every key of a table it truncates. The touched keys are named as literals where there are
    few (Delta skips the current tables' files by them), else joined as local rows."""
    keys = sorted({k for _, k in touched})
    wanted = F.col("_t").isin(sorted(truncated)) if truncated else F.lit(False)
    if not keys and not truncated:
        return pa.table({c: pa.array([], pa.string()) for c in (*TABLE, "_t", "_k", "_shard")})
    if len(keys) <= KEY_LITERALS:
        found = previous.where(wanted | F.col("_k").isin(keys))
    else:
        pairs = pa.table({"_t": [t for t, _ in touched], "_k": [k for _, k in touched]})
        pairs = previous.sparkSession.createDataFrame(pairs).withColumn("_touched", F.lit(True))
        found = previous.join(pairs, ["_t", "_k"], "left").where(wanted | F.col("_touched").isNotNull())
    return apply.live_among(found.select(*TABLE, "_t", "_k", "_shard").toArrow(), touched, truncated)


def _touched(changes: DataFrame, local: pa.Table | None) -> dict[str, list[tuple]]:
    """The tables each topic's row changes name (`day.touched_tables`), from the day held here or by Spark."""
    if local is None:
        local = changes.select("source_topic", *TABLE, "op").where(F.col("op").isin(*ROW_OPS)).distinct().toArrow()
    return touched_tables(local)


def _table_rows(changes: DataFrame, local: pa.Table | None, table: tuple) -> pa.Table:
    """A table's row changes of the day (`day.table_rows`), from the day held here or collected by Spark."""
    return table_rows(local if local is not None else changes.where(_match(table)).select(*IMAGE_FIELDS).toArrow(),
                      table)  # fmt: skip


def _match(table: tuple):
    match = F.lit(True)
    for column, value in zip(TABLE, table, strict=True):
        match = match & F.col(column).eqNullSafe(F.lit(value).cast("string"))
    return match


def previous_keys(
    spark: SparkSession, root: str, tables: list[tuple]
) -> tuple[DataFrame, dict[tuple, list[ColumnPlan]], set[tuple]]:
    """The live keys (`_k`, and `_shard`: see `small_tables.live_keys`) of each of `tables`, read from the
    current tables at their latest version,
    pinned: the day's MERGEs must not change what its plans read. Also the source columns of each table
    there is, from the same read: which tables exist and what they hold, known without another probe or
    load of each table's log; and the tables whose keys Spark reads (the others' are local rows)."""
    # the tables delta-rs wrote: their keys read without a Spark job (Delta's log replay is one per table)
    held, local = local_days.held_keys(root, tables)
    keys, spark_read = apply.local_frame(spark, local), set()
    for table in tables:
        path = table_paths(root, table).current
        version = None if table in held else io.table_version(spark, path)
        if version is not None:
            names = [F.lit(v).cast("string").alias(c) for c, v in zip((*TABLE, "_t"), (*table, table_text(table)),
                                                                      strict=True)]  # fmt: skip
            live = spark.read.format(io.DELTA).option("versionAsOf", version).load(path)
            held[table] = source_columns(live.schema)
            shard = F.col(SOURCE_TABLE_COLUMN) if SOURCE_TABLE_COLUMN in live.columns else F.lit(None).cast("string")
            keys = keys.unionByName(live.select(*names, F.col("_cdc_key").alias("_k"), shard.alias("_shard")))
            spark_read.add(table)
    return keys, held, spark_read


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
    fold_in_driver: bool,
    schema_changes: tuple,
) -> dict:
    """Write one day into each table it changed; record the versions, the day's anomalies and figures.
    `restored`: tables a backfill restored that no day since changed, at their state at the start of the
    day by a new version: not restored again; the day's tables leave the set. `fold_in_driver`: a day small
    enough to collect, folded in this process (`apply.fold_local`) unless it truncates a table Spark holds."""
    changes, local_changes = day_changes(spark, lake_root, day, topics, fold_in_driver)
    # a day's few DDL events, collected where Spark read the day
    ddl = ddl_events(local_changes if local_changes is not None else changes.where(F.col("op") == "DDL").toArrow())
    _, dialects, _ = schema_changes
    rows = functools.cache(functools.partial(_table_rows, changes, local_changes))
    touched = functools.partial(_touched, changes, local_changes)
    schema = planned_schema(spark, root, day, ddl, schema_changes, rows, touched)
    previous_day = max((d for d in applied_days(spark, root) if d < day), default=None)
    local_effects = None if local_changes is None else apply.local_effects(local_changes, keys, kafka_keys,
                                                                           schema.rewrite)  # fmt: skip
    effects = effects_frame(changes, keys, kafka_keys, schema.rewrite or None) if local_effects is None else None
    tables, skipped = day_tables(effects) if local_effects is None else apply.local_tables(local_effects)
    prepared_tables(spark, root, day, list(dict.fromkeys([*tables, *schema.tables])), restored, schema)
    live_keys, held, spark_read = previous_keys(spark, root, tables)
    result = None
    if local_effects is not None:
        routed = bool(schema.rewrite.routes)
        folded = apply.fold_local(local_effects, skipped, functools.partial(_live_keys, live_keys), routed)
        # a TRUNCATE of a table whose keys Spark reads would collect all its keys: Spark folds that day
        if not folded.truncated & spark_read:
            result = apply.applied_from_local(spark, folded)
        else:
            effects = apply.local_frame(spark, local_effects)
    result = result or apply_effects(effects, live_keys, skipped, bool(schema.rewrite.routes))
    # a local lake: a small day's datasets and every day's versions committed by delta-rs
    local = small_tables.max_rows(spark) > 0 and delta_rs.local_table_path(root) is not None
    try:
        figures = apply.column_figures(result)
        invalid = not all(f.valid for f in figures.values())  # else no cell fails its type: not looked for again
        with ThreadPoolExecutor(max_workers=CONCURRENT_WRITES, thread_name_prefix="snapshot") as pool:
            ddl_rows, unread = ddl_dataset(ddl, day, dialects)
            ddl_rows = ddl_rows, pa.concat_tables([unread, schema.anomalies])
            side = pool.submit(_write_day_datasets, spark, root, day, ddl_rows, result, late, invalid, local)
            days = table_days(result.tables, figures, held)
            entries = _merge_tables(spark, root, day, result, days, rows_before(root, previous_day), pool)
            applied, anomalies = side.result()
        if anomalies is None:
            frame = read_day(spark, join(root, ANOMALIES), ANOMALY_SCHEMA, day)
            anomalies = [{**r.asDict(), "n": r["count"]} for r in frame.groupBy(*TABLE, "kind").count().collect()]
        return finished_day(spark, root, day, schema, entries, previous_day, skipped, applied, anomalies,
                            local)  # fmt: skip
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
    local: bool,
) -> tuple[int, list[dict] | None]:
    """The day's anomalies, applied event ids and DDL (each replacing an earlier run's): the events
    applied, and the anomalies when they were collected. On a `local` lake, a day of at most
    `small_tables.max_rows` events has each dataset of at most that many rows written by delta-rs.

    The values failing their type are looked for only when the day has some (`invalid`). The anomalies
    are written before the applied ids: a late day's are read against the ids applied before. `ddl`: the
    day's `_ddl` rows and its `ddl_unread` anomalies (`day.ddl_dataset`)."""
    applied = result.events.count()
    limit = small_tables.max_rows(spark)
    max_rows = limit if local and applied <= limit else 0
    anomalies = result.anomalies.unionByName(apply.invalid_cells(result)) if invalid else result.anomalies
    if late:
        applied_before = read_day(spark, join(root, APPLIED), APPLIED_SCHEMA, day)
        anomalies = anomalies.unionByName(_late_events(result.events, applied_before))
    ddl_rows, unread = ddl
    if unread.num_rows:
        anomalies = anomalies.unionByName(spark.createDataFrame(unread))
    anomalies = anomalies.select(*ANOMALY_COLUMNS).withColumn("dt", F.lit(day))
    rows = replace_day(anomalies, join(root, ANOMALIES), day, max_rows, schema=ANOMALY_SCHEMA)
    replace_day(result.events.select("event_id", "dt"), join(root, APPLIED), day, max_rows, schema=APPLIED_SCHEMA)
    replace_day(spark.createDataFrame(ddl_rows, DDL_SCHEMA), join(root, DDL), day, max_rows)
    return applied, rows


def _merge_tables(
    spark: SparkSession,
    root: str,
    day: str,
    result: Applied,
    days: list[TableDay],
    rows_before: Mapping[tuple, int],
    pool: ThreadPoolExecutor,
) -> list[TableVersion]:
    """Each changed table's two MERGEs, the tables side by side in `pool`; the versions they made (in
    table order). The tables delta-rs writes (`small_tables.owns`) are written from one collect of all
    their rows; a day of more rows than the local engine holds (`local_days.MAX_EVENTS_SETTING`) has Spark
    MERGE into every table, delta-rs's as they are (no feature added)."""
    held = sum(d.sets + d.opened + d.live for d in days) <= local_days.max_events(spark.conf)
    small = dict(zip([d.table for d in days], pool.map(lambda d: _small_columns(spark, root, d, held), days),
                     strict=True))  # fmt: skip
    plans = {table: columns for table, columns in small.items() if columns is not None}
    rows = pool.submit(small_tables.days_rows, spark, result, plans) if plans else None
    merges = [pool.submit(_merge_table, spark, root, day, result, d, rows_before, small[d.table], rows) for d in days]
    return [m.result() for m in merges]


def _small_columns(spark: SparkSession, root: str, table_day: TableDay, held: bool) -> list[ColumnPlan] | None:
    """The columns of a table delta-rs writes (`small_tables.owns`), an existing one's brought to the
    day's; None for a table Spark writes (all where the day is not `held`: too large to collect)."""
    paths = table_paths(root, table_day.table)
    names = [c.name for c in table_day.columns + (table_day.held or [])]
    if not held or not small_tables.owns(paths, spark, max(table_day.sets, table_day.opened), names):
        return None
    return small_tables.day_columns(paths, table_day, small_tables.prints_utc(spark)) or prepare(
        spark, paths, table_day.columns, table_day.pk_columns, table_day.held
    )


def _merge_table(
    spark: SparkSession,
    root: str,
    day: str,
    result: Applied,
    table_day: TableDay,
    rows_before: Mapping[tuple, int],
    small: list[ColumnPlan] | None,
    small_rows: Future | None,
) -> TableVersion:
    """One table's columns brought to the day's, then its two MERGEs: by delta-rs for a small table (its
    columns `small`, its rows in `small_rows`), else by Spark. Its rows are its rows before the day
    (`rows_before`) plus what its MERGE added less what it removed."""
    table = table_day.table
    paths = table_paths(root, table)
    existed = table_day.held is not None
    match = _match(table)
    if small is not None:
        return write_table(root, day, table_day, small_rows.result()[table], small, rows_before)
    columns = prepare(spark, paths, table_day.columns, table_day.pk_columns, table_day.held)
    net, opened, closed = result.net.where(match), result.opened.where(match), result.closed.where(match)
    # a TRUNCATE also ends the versions of keys the day does not name: no literals then
    keys = None if table_day.truncated else table_day.keys
    if not table_day.live:  # only inserts: appended, no join with the tables
        _side_by_side(lambda: append_current(net, paths.current, columns),
                      lambda: append_history(opened, paths.history, columns))  # fmt: skip
        added = table_day.sets
    elif keys:  # the keys' rows replaced: one commit each, no join (`tables.replace_current`)
        _side_by_side(lambda: replace_current(net, paths.current, columns, keys),
                      lambda: replace_history(spark, paths.history, opened, closed, columns, keys,
                                              table_day.earliest_end))  # fmt: skip
        added = table_day.sets - table_day.live
    else:
        added = _side_by_side(
            lambda: merge_current(spark, paths.current, net, columns, table_day.truncated, keys),
            lambda: merge_history(spark, paths.history, opened, closed, columns, keys),
        )
    # restored to its first version: counted
    return version_at_end(spark, root, day, table, None if existed and table not in rows_before
                          else rows_before.get(table, 0) + added)  # fmt: skip


def _side_by_side(first: Callable[[], R], second: Callable[[], object]) -> R:
    """`first()`'s result, `second()` run beside it in a thread of its own: a table's current and history
    writes are independent, and each is mostly the driver's planning and Delta's commit, so they overlap
    even on 2 cores (a quiet day's two MERGEs into a 1M-row table, docs/benchmarks-history.md). Both have ended before
    either's error is raised: a failed day leaves no write running (`versions.restore_unfinished`)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="history") as side:
        later = side.submit(second)
        try:
            out = first()
        except Exception as error:
            if later.exception() is not None:  # waits for it; both failed: its error named on the first's
                error.add_note(f"the other table's write failed too: {later.exception()!r}")
            raise
    later.result()
    return out


def _late_events(events: DataFrame, applied_before: DataFrame) -> DataFrame:
    return events.join(applied_before.select("event_id"), "event_id", "left_anti").select(
        *TABLE, F.lit(LATE_EVENT).alias("kind"), "event_id", "op", F.lit(LATE_DETAIL).alias("detail"),
    )  # fmt: skip
