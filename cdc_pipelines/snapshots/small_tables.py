"""A source table's day written with delta-rs: every table of the local engine, and on the Spark engine
the local lake's tables delta-rs created (a MERGE through Spark's Delta costs about 20 Spark jobs and 1-2 s
of driver work however few its rows; delta-rs's commit 10-30 ms).

The day's rows come from the fold typed by `day_rows` (`values.typed_array`, the one typing rule of both
engines), and delta-rs applies them with the clauses of Spark's MERGEs (`merges`), one commit per table.

A table keeps its writer and the features it was created with, whichever engine runs next: no table
changes hands by growing. delta-rs creates a table without deletion vectors (delta-rs 1.6 writes
copy-on-write; the few files a day touches are rewritten) and without column mapping (delta-rs 1.6 marks a
new column-mapped table without the `columnMapping` feature Spark's reader checks), and writes it from then
on. A table Spark created has both, and only Spark writes it; so do a table whose column names need
mapping and a folder name with `%` (delta-rs 1.6 decodes it as a URL): `unwritable` names them for the
engine table. Which of the two creates a new table on the Spark engine is decided then, by its first day's
rows (`MAX_ROWS_SETTING`). Under the same bound delta-rs commits a day's `_anomalies`, `_applied` and `_ddl`
(`replace_datasets`, for a day of either engine and either fold).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.delta_rs import file_rows, local_table_path
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.schema_changes.routes import SOURCE_TABLE_COLUMN
from cdc_pipelines.snapshots import merges
from cdc_pipelines.snapshots.apply import Applied
from cdc_pipelines.snapshots.day import TableDay
from cdc_pipelines.snapshots.effects import table_text
from cdc_pipelines.snapshots.fold import CLOSE, FOLD_SCHEMA, NET, OPEN
from cdc_pipelines.snapshots.merges import KIND
from cdc_pipelines.snapshots.schema import (
    ANOMALY_SCHEMA,
    APPLIED_SCHEMA,
    CDC_COLUMNS,
    CURRENT_CDC,
    DDL_SCHEMA,
    HISTORY_CDC,
    TABLE,
)
from cdc_pipelines.snapshots.store import ANOMALIES, APPLIED, DDL, replace_day, replace_local_day, table_paths
from cdc_pipelines.snapshots.tables import PROPERTIES, TablePaths, column_order, evolve, prepare
from cdc_pipelines.snapshots.values import ColumnPlan, typed_array, widened

# the setting (`--conf`, CDC_SPARK_CONF) of the most rows a new table's first day gives it for delta-rs to
# create it on the Spark engine (a local lake); a larger one, or every one with 0, Spark creates with deletion
# vectors, which pay on a table large from its start. Either keeps its writer after (the local engine writes
# only delta-rs's)
MAX_ROWS_SETTING = "cdc.snapshots.small_table_max_rows"
DEFAULT_MAX_ROWS = 100_000
# a day's datasets in the order they are replaced: a late day's anomalies are read against the ids applied
# before (`day.late_events`), so `_applied` is replaced after `_anomalies`
_DAY_DATASETS = ((ANOMALIES, ANOMALY_SCHEMA), (APPLIED, APPLIED_SCHEMA), (DDL, DDL_SCHEMA))
# what Delta accepts as a column name without column mapping (and no backtick: delta-rs's merge quotes
# names with backticks without escaping them)
_PLAIN_NAME = re.compile(r"[^ ,;{}()\n\t=`]+")
_PART = "_cdc_part"
# Delta's type names where Spark's differ (tests name a delta-rs schema's types as Spark does with it)
SPARK_TYPE_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
_DELTA_NAMES = {spark: delta for delta, spark in SPARK_TYPE_NAMES.items()}
_SPARK_FEATURES = frozenset({"deletionVectors", "columnMapping"})
# the table properties of Spark's tables that delta-rs writes too
_PROPERTIES = {k: v for k, v in PROPERTIES.items() if k == "delta.autoOptimize.optimizeWrite"}


def max_rows(spark: SparkSession) -> int:
    return int(spark.conf.get(MAX_ROWS_SETTING, str(DEFAULT_MAX_ROWS)))


def commits_root(spark: SparkSession | None, root: str) -> bool:
    """Whether delta-rs commits the snapshot root's datasets and versions: every one on the local engine; on
    Spark's, a local root's unless `MAX_ROWS_SETTING` is 0."""
    return spark is None or (max_rows(spark) > 0 and local_table_path(root) is not None)


def replace_datasets(
    spark: SparkSession | None, root: str, day: str, datasets: tuple[pa.Table | DataFrame, ...], applied: int
) -> list[dict] | None:
    """The day's anomalies, applied event ids and DDL (`datasets`: rows held here, or Spark frames), each
    replacing an earlier run's partition, in that order (`_DAY_DATASETS`): both engines' days. delta-rs
    commits them where it commits the root (`commits_root`) for a day of at most `max_rows` events applied
    (`applied`), each of at most that many rows (a frame collected up to one past it: `store.replace_day`);
    Spark the others. Returns the anomalies' rows where a frame of them was collected."""
    limit = max_rows(spark) if spark is not None and commits_root(spark, root) else 0
    limit = limit if applied <= limit else 0
    collected = {}
    for rows, (folder, schema) in zip(datasets, _DAY_DATASETS, strict=True):
        if not isinstance(rows, pa.Table):
            collected[folder] = replace_day(rows, join(root, folder), day, limit, schema=schema)
            continue
        held = spark is None or (limit > 0 and rows.num_rows <= limit)
        replace_local_day(rows, join(root, folder), day, schema, None if held else spark)
    return collected.get(ANOMALIES)


def prints_utc(spark: SparkSession | None) -> bool:
    """Whether times print in UTC: always on the local engine, on Spark's where its session's time zone is UTC."""
    return spark is None or spark.conf.get("spark.sql.session.timeZone") == "UTC"


def unwritable_columns(names) -> str | None:
    """Why delta-rs cannot write a table with these column names (one needs column mapping), or None."""
    bad = sorted(n for n in names if n is not None and not _PLAIN_NAME.fullmatch(n))
    return f"the column name {bad[0]!r} needs Delta's column mapping" if bad else None


def unwritable_table(paths: TablePaths) -> str | None:
    """Why delta-rs cannot write this table's two Delta tables, or None: a folder name it cannot open, or
    a table Spark created (deletion vectors, column mapping)."""
    from deltalake import DeltaTable

    for path in (paths.current, paths.history):
        local = local_table_path(path)
        if local is None:
            return f"delta-rs cannot open {path} (a folder name with %, or not on local disk)"
        if DeltaTable.is_deltatable(local) and _is_spark_owned(DeltaTable(local)):
            return f"{path} has deletion vectors or column mapping, which delta-rs does not write"
    return None


def owns(paths: TablePaths, spark: SparkSession | None, first_rows: int = 0, names: Iterable[str] = ()) -> bool:
    """Whether delta-rs writes this table: every table of the local engine (no `spark`); on Spark's, a local
    table with plain column names (`names`: those it is to hold) that delta-rs created (whatever it has grown
    to), or a new one whose first day gives it at most `max_rows` rows (`first_rows`: the larger of its
    current and history tables' rows after the day)."""
    from deltalake import DeltaTable

    if spark is None:
        return True
    if unwritable_table(paths) or unwritable_columns(names):
        return False
    if DeltaTable.is_deltatable(local_table_path(paths.current)):
        return True
    return 0 < max_rows(spark) and first_rows <= max_rows(spark)


def _is_spark_owned(table) -> bool:
    protocol = table.protocol()
    features = set(protocol.reader_features or ()) | set(protocol.writer_features or ())
    configuration = table.metadata().configuration
    return bool(features & _SPARK_FEATURES) or configuration.get("delta.columnMapping.mode", "none") != "none"


def _delta_rs_table(path: str):
    """The table at `path` loaded once, when delta-rs wrote it; None where there is none, elsewhere, or Spark's."""
    from deltalake import DeltaTable

    local = local_table_path(path)
    if local is None or not DeltaTable.is_deltatable(local):
        return None
    table = DeltaTable(local)
    return None if _is_spark_owned(table) else table


def live_keys(path: str) -> tuple[list[ColumnPlan], pa.Table] | None:
    """The source columns and live keys (`_k`: its `_cdc_key`; `_shard`: the row's shard where routes merge
    shards into it, `_cdc_source_table`, else null) of a current table delta-rs wrote, read without Spark;
    None where there is no such table (none at all, elsewhere, or Spark's)."""
    table = _delta_rs_table(path)
    if table is None:
        return None
    columns = _column_plans(table)
    routed = any(c.name == SOURCE_TABLE_COLUMN for c in columns)
    rows = delta_rs.table_rows(table, ["_cdc_key", *([SOURCE_TABLE_COLUMN] if routed else [])])
    shards = rows.column(SOURCE_TABLE_COLUMN) if routed else pa.nulls(rows.num_rows, pa.string())
    return columns, pa.table({"_k": rows.column("_cdc_key").cast(pa.string()), "_shard": shards.cast(pa.string())})


def held_keys(root: str, tables: list[tuple]) -> tuple[dict[tuple, list[ColumnPlan]], pa.Table]:
    """The columns of each of `tables` delta-rs wrote, and their live keys (`TABLE`, `_t`, `_k`, `_shard`:
    `live_keys`), read without Spark."""
    held, parts = {}, []
    for table in tables:
        own = live_keys(table_paths(root, table).current)
        if own is None:
            continue
        held[table], keys = own
        named = {c: pa.array([v] * len(keys), pa.string()) for c, v in zip((*TABLE, "_t"), (*table, table_text(table)),
                                                                           strict=True)}  # fmt: skip
        parts.append(pa.table({**named, "_k": keys.column("_k"), "_shard": keys.column("_shard")}))
    empty = pa.table({c: pa.array([], pa.string()) for c in (*TABLE, "_t", "_k", "_shard")})
    return held, pa.concat_tables([empty, *parts])


def column_plans(path: str) -> list[ColumnPlan] | None:
    """The source columns of a table delta-rs wrote and their types (its log only); None for any other."""
    table = _delta_rs_table(path)
    return None if table is None else _column_plans(table)


def _column_plans(table) -> list[ColumnPlan]:
    return [ColumnPlan(f.name, SPARK_TYPE_NAMES.get(f.type.type, f.type.type))
            for f in table.schema().fields if f.name not in CDC_COLUMNS]  # fmt: skip


def rows_of(path: str) -> int | None:
    """The rows of a table delta-rs wrote, from its files' statistics (no scan); None for any other."""
    table = _delta_rs_table(path)
    return None if table is None else file_rows(table)


def evolve_columns(
    paths: TablePaths, day: list[ColumnPlan], held: list[ColumnPlan], utc: bool = True
) -> list[ColumnPlan] | None:
    """Bring an existing table's columns to the day's by delta-rs (both tables): columns added, numbers
    widened to a wider decimal (an exact cast), columns widened to text (`as_text`), the table rewritten
    once; the columns after. None (Spark's `tables.prepare` does it) when a `timestamp` column becomes
    text and the times are not printed in UTC (`utc`: Spark's session time zone is UTC; the local engine's
    always is)."""
    from deltalake import DeltaTable, Field
    from deltalake.schema import PrimitiveType

    added, changed, after = evolve(day, held)
    if not utc and ("timestamp", "string") in changed.values():
        return None
    for path in (local_table_path(paths.current), local_table_path(paths.history)):
        if any(c.spark_type == "timestamp_ntz" for c in added):
            _with_timestamp_ntz(DeltaTable(path))
        held_names = {f.name for f in DeltaTable(path).schema().fields} if added else set()
        fields = [
            Field(c.name, PrimitiveType(_DELTA_NAMES.get(c.spark_type, c.spark_type)))
            for c in added
            if c.name not in held_names
        ]  # a history keeps a column its current dropped
        if fields:
            DeltaTable(path).alter.add_columns(fields)
        if changed:
            _rewrite(path, lambda data: _widened(data, changed))
    return after


def _widened(data: pa.Table, changed: Mapping[str, tuple[str, str]]) -> pa.Table:
    for name, (old, new) in changed.items():
        data = data.set_column(data.schema.get_field_index(name), name, widened(data.column(name), old, new))
    return data


def _with_timestamp_ntz(table) -> None:
    """The `timestampNtz` feature on a table that lacks it, before a column of that type joins it."""
    from deltalake import TableFeatures

    protocol = table.protocol()
    if "timestampNtz" not in set(protocol.writer_features or ()):
        table.alter.add_feature(TableFeatures.TimestampWithoutTimezone, allow_protocol_versions_increase=True)


def days_rows(spark: SparkSession, applied: Applied, plans: Mapping[tuple, list[ColumnPlan]]) -> dict[tuple, pa.Table]:
    """`day_rows` of a day Spark folded: the fold's rows of the tables `plans` names, in one collect for all
    of them (a collect per table was a Spark job per table, 0.3-0.6 s each), typed here as the local engine
    types them."""
    wanted = F.col("_t").isin([table_text(t) for t in plans])
    parts = (
        applied.net.where(wanted).withColumn("_out", F.lit(NET)),
        applied.opened.where(wanted).withColumn("_out", F.lit(OPEN)),
        applied.closed.where(wanted).withColumn("_out", F.lit(CLOSE)),
    )
    frame = parts[0].unionByName(parts[1], allowMissingColumns=True).unionByName(parts[2], allowMissingColumns=True)
    names = [f.name for f in FOLD_SCHEMA if f.name in frame.columns]
    return day_rows(frame.select(*names).toArrow(), plans)


_PARTS = pa.array(["current", "open", "close"])


def day_rows(folded: pa.Table, plans: Mapping[tuple, list[ColumnPlan]]) -> dict[tuple, pa.Table]:
    """The day of each table `plans` names (with its columns) as its writes read it, from the fold's rows
    (`fold.FOLD_SCHEMA`): current rows (`_cdc_part` `current`, `_cdc_kind` `set` or `del`), the versions
    opened (`open`) and the open versions ended (`close`); each column's values typed by
    `values.typed_array`, the one typing rule of both engines."""
    outs = folded.column("_out")
    part = pc.take(_PARTS, pc.index_in(outs, pa.array([NET, OPEN, CLOSE])))
    folded = folded.append_column(_PART, part)
    folded = folded if part.null_count == 0 else folded.filter(pc.is_valid(part))  # a copy only where rows go
    kind = pc.if_else(pc.equal(folded.column("_out"), NET), folded.column("kind"), folded.column(_PART))
    folded = folded.append_column(KIND, kind)
    cdc = sorted({name for name, _ in (*CURRENT_CDC, *HISTORY_CDC)} - {"_cdc_key"})
    out = {}
    for table, columns in plans.items():
        mine = pc.equal(folded.column("_t"), table_text(table))
        own = folded if mine.null_count == 0 and pc.all(mine).as_py() else folded.filter(mine)
        typed = {c.name: typed_array(pc.map_lookup(own.column("row"), c.name, "first"), c.spark_type) for c in columns}
        extra = {_PART: own.column(_PART), KIND: own.column(KIND), **{c: own.column(c) for c in cdc},
                 "_cdc_key": own.column("_k")}  # fmt: skip
        out[table] = pa.table({**typed, **extra})
    return out


def _part(rows: pa.Table, name: str, names: list[str]) -> pa.Table:
    picked = rows.filter(pc.equal(rows[_PART], name)).select(names)
    return picked.cast(pa.schema([f.with_nullable(True) for f in picked.schema]))


def _names(columns: list[ColumnPlan], cdc: tuple) -> list[str]:
    return [c.name for c in columns] + [name for name, _ in cdc]


def write_day(
    paths: TablePaths, rows: pa.Table, columns: list[ColumnPlan], existed: bool, fresh: bool, truncated: bool
) -> int:
    """Create the two tables (not `existed`) and apply the day's rows (`days_rows`' of the table) to them: appended
    when no key of the day was live (`fresh`), else one MERGE each (`merges`), as Spark's writer does. Returns
    the rows the current table gained less those it lost."""
    from deltalake import DeltaTable, write_deltalake

    current_names = _names(columns, CURRENT_CDC)
    history_names = _names(columns, HISTORY_CDC)
    current = _part(rows, "current", [*current_names, KIND])
    opened = _part(rows, "open", [*history_names, KIND])
    closes = _part(rows, "close", ["_cdc_key", "_cdc_end_at", KIND])
    current_path, history_path = local_table_path(paths.current), local_table_path(paths.history)
    if not existed:
        # version 0 is the empty table, as Spark's create makes it: what a backfill of the first day restores
        DeltaTable.create(current_path, current.drop([KIND]).schema, configuration=_PROPERTIES)
        DeltaTable.create(history_path, opened.drop([KIND]).schema, configuration=_PROPERTIES)
    if fresh:
        sets = current.filter(pc.equal(current[KIND], "set")).drop([KIND])
        write_deltalake(current_path, sets, mode="append")
        # `merge`: a history may hold columns the current table lost (a dropped column), null in new versions
        write_deltalake(history_path, opened.drop([KIND]), mode="append", schema_mode="merge")
        return sets.num_rows
    metrics = _merged(DeltaTable(current_path), current, merges.current_merge(truncated))
    _merged(DeltaTable(history_path), pa.concat_tables([opened, closes], promote_options="default"),
            merges.history_merge())  # fmt: skip
    return metrics["num_target_rows_inserted"] - metrics["num_target_rows_deleted"]


def day_columns(paths: TablePaths, table_day: TableDay, utc: bool = True) -> list[ColumnPlan] | None:
    """A table's columns after the day: a new table's in order, an existing one's brought to the day's
    (`evolve_columns`; None where it leaves that to Spark's `tables.prepare`)."""
    if table_day.held is None:
        return column_order(table_day.columns, table_day.pk_columns)
    return evolve_columns(paths, table_day.columns, table_day.held, utc)


def delta_rs_columns(
    spark: SparkSession | None, root: str, table_day: TableDay, held: bool = True
) -> list[ColumnPlan] | None:
    """The columns after the day of a table delta-rs writes (`owns`), an existing one's brought to the day's
    (by Spark's `tables.prepare` where delta-rs leaves that to it: `day_columns`); None for a table Spark writes:
    every one where the day is not `held` (more rows than the driver holds, `local_days.MAX_EVENTS_SETTING`:
    Spark MERGEs into delta-rs's tables as they are, no feature added)."""
    paths = table_paths(root, table_day.table)
    names = [c.name for c in table_day.columns + (table_day.held or [])]
    if not held or not owns(paths, spark, max(table_day.sets, table_day.opened), names):
        return None
    columns = day_columns(paths, table_day, prints_utc(spark))
    return columns if columns is not None else prepare(spark, paths, table_day.columns, table_day.pk_columns,
                                                       table_day.held)  # fmt: skip


def _merged(table, source: pa.Table, merge: merges.Merge) -> dict:
    """`merge` (`merges`) rendered with delta-rs's API and run; its metrics."""
    builder = table.merge(source, merge.on, source_alias="s", target_alias="t")
    for clause in merge.clauses:
        if clause.action == merges.MATCHED_DELETE:
            builder = builder.when_matched_delete(clause.condition)
        elif clause.action == merges.MATCHED_UPDATE and clause.assign:
            builder = builder.when_matched_update(dict(clause.assign), clause.condition)
        elif clause.action == merges.MATCHED_UPDATE:
            builder = builder.when_matched_update_all(clause.condition, except_cols=[KIND])
        elif clause.action == merges.NOT_MATCHED_INSERT:
            builder = builder.when_not_matched_insert_all(clause.condition, except_cols=[KIND])
        else:
            builder = builder.when_not_matched_by_source_delete(clause.condition)
    return builder.execute()


def restore(path: str, version: int) -> bool:
    """Restore a table delta-rs wrote to `version` (nothing when it is there): 20-50 ms, where Spark's
    RESTORE is 1-3 s of jobs a table. False for a table that is not delta-rs's (Spark restores it)."""
    table = _delta_rs_table(path)
    if table is None:
        return False
    if table.version() != version:
        table.restore(version)
    return True


def _rewrite(path: str, rewrite: Callable[[pa.Table], pa.Table | None]) -> None:
    """The local table at `path` rewritten once with the rows `rewrite` makes of its rows (none where it
    gives None): delta-rs 1.6 writes no column mapping, which would rename or drop in the log alone."""
    from deltalake import DeltaTable, write_deltalake

    data = rewrite(delta_rs.table_rows(DeltaTable(local_table_path(path))))
    if data is not None:
        write_deltalake(local_table_path(path), data, mode="overwrite", schema_mode="overwrite")


def rename_columns(path: str, pairs: list[tuple[str, str]]) -> None:
    """The table rewritten once with each `(old, new)` column it has renamed, in order."""

    def renamed(data: pa.Table) -> pa.Table | None:
        names = data.column_names
        for old, new in pairs:
            names = [new if n == old and new not in names else n for n in names]
        return data.rename_columns(names) if names != data.column_names else None

    _rewrite(path, renamed)


def drop_columns(path: str, names: list[str]) -> None:
    """The table rewritten once without the columns `names` it has."""
    _rewrite(path, lambda data: data.drop(gone) if (gone := [n for n in names if n in data.column_names]) else None)


def carry(source: str, target: str) -> None:
    """`target` created empty (version 0, what a backfill restores: there already on a day applied again)
    with `source`'s columns, given its rows; `source` emptied (its versions stay, for a backfill to restore)."""
    from deltalake import DeltaTable, write_deltalake

    table = DeltaTable(local_table_path(source))
    data = delta_rs.table_rows(table)
    if not DeltaTable.is_deltatable(local_table_path(target)):
        DeltaTable.create(local_table_path(target), data.schema, configuration=_PROPERTIES)
    if data.num_rows:
        write_deltalake(local_table_path(target), data, mode="append")
        table.delete()
