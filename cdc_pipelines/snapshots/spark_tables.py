"""The tables of a day that Spark writes (those delta-rs does not, `small_tables.owns`), whichever engine folded
the day: their live keys read and their day written, a table's current and history writes side by side and a
day's tables in a pool of `CONCURRENT_WRITES` (each write is mostly the driver's planning and Delta's commit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.lake import io
from cdc_pipelines.schema_changes.routes import SOURCE_TABLE_COLUMN
from cdc_pipelines.snapshots import apply
from cdc_pipelines.snapshots.day import TableDay
from cdc_pipelines.snapshots.effects import table_text
from cdc_pipelines.snapshots.fold import KEY_LITERALS
from cdc_pipelines.snapshots.schema import TABLE
from cdc_pipelines.snapshots.store import table_paths
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
from cdc_pipelines.snapshots.versions import TableVersion, version_at_end

# tables whose writes run side by side (each its current and history table on two threads: up to twice
# as many Spark jobs): a MERGE of a small day is mostly the driver's work (its plans, Delta's log, the
# commit), so the tables' MERGEs and the day's datasets overlap even on 2 cores
CONCURRENT_WRITES = 4
R = TypeVar("R")


def matching(table: tuple) -> Column:
    """The rows of `table` (its `TABLE` columns, nulls alike)."""
    match = F.lit(True)
    for column, value in zip(TABLE, table, strict=True):
        match = match & F.col(column).eqNullSafe(F.lit(value).cast("string"))
    return match


def spark_keys(
    spark: SparkSession, root: str, tables: list[tuple], held: dict[tuple, list[ColumnPlan]]
) -> DataFrame | None:
    """The live keys (`TABLE`, `_t`, `_k`, `_shard`: see `small_tables.live_keys`) of those of `tables` with a current
    table delta-rs did not write (not in `held`), read at its latest version, pinned (the day's MERGEs must not change
    what its plans read); None where there is none. Each one's source columns join `held`, from the same read."""
    keys = None
    for table in tables:
        path = table_paths(root, table).current
        version = None if table in held else io.table_version(spark, path)
        if version is None:
            continue
        names = [F.lit(v).cast("string").alias(c) for c, v in zip((*TABLE, "_t"), (*table, table_text(table)),
                                                                  strict=True)]  # fmt: skip
        live = spark.read.format(io.DELTA).option("versionAsOf", version).load(path)
        held[table] = source_columns(live.schema)
        shard = F.col(SOURCE_TABLE_COLUMN) if SOURCE_TABLE_COLUMN in live.columns else F.lit(None).cast("string")
        live = live.select(*names, F.col("_cdc_key").alias("_k"), shard.alias("_shard"))
        keys = live if keys is None else keys.unionByName(live)
    return keys


def live_among(keys: DataFrame, touched: set[tuple[str, str]], truncated: set[str]) -> pa.Table:
    """`apply.live_among` of keys Spark reads (`spark_keys`), collected: the touched ones are named as
    literals where there are few (Delta skips the current tables' files by them), else joined as local rows."""
    wanted_keys = sorted({k for _, k in touched})
    wanted = F.col("_t").isin(sorted(truncated)) if truncated else F.lit(False)
    if not wanted_keys and not truncated:
        return pa.table({c: pa.array([], pa.string()) for c in (*TABLE, "_t", "_k", "_shard")})
    if len(wanted_keys) <= KEY_LITERALS:
        found = keys.where(wanted | F.col("_k").isin(wanted_keys))
    else:
        pairs = pa.table({"_t": [t for t, _ in touched], "_k": [k for _, k in touched]})
        pairs = keys.sparkSession.createDataFrame(pairs).withColumn("_touched", F.lit(True))
        found = keys.join(pairs, ["_t", "_k"], "left").where(wanted | F.col("_touched").isNotNull())
    return apply.live_among(found.select(*TABLE, "_t", "_k", "_shard").toArrow(), touched, truncated)


def write_table(
    spark: SparkSession,
    root: str,
    day: str,
    table_day: TableDay,
    net: DataFrame,
    opened: DataFrame,
    closed: DataFrame,
    rows_before: Mapping[tuple, int],
) -> TableVersion:
    """One table's columns brought to the day's, then its day written by Spark from the fold's `net`, `opened` and
    `closed`: appended (no key of the day was live), its keys' rows replaced (few keys), else MERGEd. Its rows:
    those before the day (`rows_before`) plus what the writes added less what they removed."""
    table = table_day.table
    paths = table_paths(root, table)
    existed = table_day.held is not None
    columns = prepare(spark, paths, table_day.columns, table_day.pk_columns, table_day.held)
    # a TRUNCATE also ends the versions of keys the day does not name: no literals then
    keys = None if table_day.truncated else table_day.keys
    if not table_day.live:  # only inserts: appended, no join with the tables
        side_by_side(lambda: append_current(net, paths.current, columns),
                     lambda: append_history(opened, paths.history, columns))  # fmt: skip
        added = table_day.sets
    elif keys:  # the keys' rows replaced: one commit each, no join (`tables.replace_current`)
        side_by_side(lambda: replace_current(net, paths.current, columns, keys),
                     lambda: replace_history(spark, paths.history, opened, closed, columns, keys,
                                             table_day.earliest_end))  # fmt: skip
        added = table_day.sets - table_day.live
    else:
        added = side_by_side(
            lambda: merge_current(spark, paths.current, net, columns, table_day.truncated, keys),
            lambda: merge_history(spark, paths.history, opened, closed, columns, keys),
        )
    # restored to its first version: counted
    return version_at_end(spark, root, day, table, None if existed and table not in rows_before
                          else rows_before.get(table, 0) + added)  # fmt: skip


def side_by_side(first: Callable[[], R], second: Callable[[], object]) -> R:
    """`first()`'s result, `second()` run beside it in a thread: a table's current and history writes are independent
    and mostly the driver's work, so they overlap even on 2 cores. Both have ended before either's error is raised:
    a failed day leaves no write running (`versions.restore_unfinished`)."""
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
