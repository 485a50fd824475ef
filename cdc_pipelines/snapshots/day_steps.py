"""The steps a snapshot day takes around its fold and writes, in the same order on both engines (`local_days`,
`run`; `spark` None on the local engine): its schema changes planned (a refusing policy refuses before
anything is written), the tables it changes restored from an unfinished run and brought to the day's names and
columns; after the writes, dropped columns taken out, the versions recorded and the summary written last.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping

import pyarrow as pa
from pyspark.sql import SparkSession

from cdc_pipelines.schema_changes.day import refuse_schema_changes, refuses
from cdc_pipelines.snapshots import schema_day, small_tables
from cdc_pipelines.snapshots.day import TableDay, summary
from cdc_pipelines.snapshots.schema_day import SchemaDay
from cdc_pipelines.snapshots.store import table_paths, write_summary
from cdc_pipelines.snapshots.values import ColumnPlan
from cdc_pipelines.snapshots.versions import TableVersion, as_of, record, restore_unfinished, version_at_end


def planned_schema(
    spark: SparkSession | None, root: str, day: str, ddl: pa.Table, schema_changes: tuple,
    rows: Callable[[tuple], pa.Table], touched: Callable[[], dict],
) -> SchemaDay:  # fmt: skip
    """The day's schema changes and routes (`schema_day.schema_day`) under its topics' policies; a policy that
    refuses a schema change raises here, before anything of the day is written."""
    policies, dialects, routes = schema_changes
    if refuses(policies):
        refuse_schema_changes(ddl, policies, dialects)
    started = functools.cache(lambda: {e.table for e in as_of(spark, root, day, before=True)})
    held = functools.partial(schema_day.held_columns, spark, root, started)
    return schema_day.schema_day(ddl, policies, dialects, routes, held, rows, touched)


def prepared_tables(
    spark: SparkSession | None, root: str, day: str, changed: Collection[tuple], restored: set[tuple],
    schema: SchemaDay,
) -> None:  # fmt: skip
    """The tables the day changes restored from an unfinished run of it (those a backfill restored already,
    `restored`, are not, and leave the set), then carried, renamed and widened by its schema changes."""
    restore_unfinished(spark, root, day, {t: table_paths(root, t) for t in changed if t not in restored})
    restored.difference_update(changed)
    schema_day.before_fold(spark, root, schema)


def finished_day(
    spark: SparkSession | None, root: str, day: str, schema: SchemaDay, entries: list[TableVersion],
    previous_day: str | None, skipped: list, applied: int, anomalies: list[dict], local: bool = False,
) -> dict:  # fmt: skip
    """After the writes: the dropped columns out of the current tables, the day's versions recorded (`local`:
    by delta-rs), the summary written; the summary."""
    schema_day.after_writes(spark, root, schema)
    written = {e.table for e in entries}
    entries = [version_at_end(spark, root, day, e.table, e.rows) if e.table in schema.dropped else e for e in entries]
    entries += [version_at_end(spark, root, day, t) for t in schema.tables if t not in written]
    record(spark, root, day, entries, local)
    figures = summary(root, day, previous_day, skipped, applied, anomalies, as_of(spark, root, day))
    write_summary(spark, root, day, figures)
    return figures


def write_table(
    root: str, day: str, table_day: TableDay, rows: pa.Table, columns: list[ColumnPlan], before: Mapping[tuple, int],
) -> TableVersion:  # fmt: skip
    """A table delta-rs writes, its day written (`small_tables.write_day`): its versions, and its rows
    after the day (its rows `before` it and what the day added: `version_at_end`)."""
    table, existed = table_day.table, table_day.held is not None
    added = small_tables.write_day(table_paths(root, table), rows, columns, existed, not table_day.live,
                                   table_day.truncated)  # fmt: skip
    return version_at_end(None, root, day, table, before[table] + added if table in before else None)
