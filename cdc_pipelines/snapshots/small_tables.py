"""A small source table's day written from the driver with delta-rs: the per-table fixed cost of a
whole-database topic.

A MERGE through Spark's Delta costs about 20 Spark jobs and 1-2 s of driver work however few its rows,
and a whole-database topic changes hundreds of tables a day, most by a few rows. A table on local disk
whose current rows after the day and whose history rows with the day's versions are each at most
`MAX_ROWS_SETTING` is written here instead: Spark types the day's rows of every such table as its
MERGEs type them (`typed.typed_value`), in one collect for all of them (`days_rows`), and delta-rs
applies them with the same clauses in one commit per table (10-30 ms). A folder name with `%` stays
Spark's: delta-rs 1.6 decodes it as a URL.

Such a table is created without deletion vectors (delta-rs 1.6 writes no table that has them; the few
small files a day touches are rewritten) and without column mapping (delta-rs 1.6 marks a new
column-mapped table without the `columnMapping` feature Spark's reader checks), so a table whose
column names need mapping stays Spark's. A table that outgrows the limit is Spark's from then on: it
gets deletion vectors and column mapping (`take_over`) before its first Spark MERGE. Spark reads,
restores and evolves these tables as its own (`tests/snapshots/test_small_tables.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.lake.delta_rs import file_rows, local_table_path
from cdc_pipelines.snapshots.apply import Applied
from cdc_pipelines.snapshots.schema import CDC_COLUMNS, CURRENT_CDC, HISTORY_CDC, TABLE
from cdc_pipelines.snapshots.tables import (
    KIND,
    PROPERTIES,
    TablePaths,
    evolve,
    quote,
)
from cdc_pipelines.snapshots.typed import ColumnPlan, typed_value
from cdc_pipelines.snapshots.values import as_text

# the setting (`--conf`, CDC_SPARK_CONF) of the most rows a table written by delta-rs holds; 0: Spark writes
# every table. A 100,000-row table's files rewrite in well under a second; past that, deletion vectors pay
MAX_ROWS_SETTING = "cdc.snapshots.small_table_max_rows"
DEFAULT_MAX_ROWS = 100_000
# what Delta accepts as a column name without column mapping (and no backtick: delta-rs's merge quotes
# names with backticks without escaping them)
_PLAIN_NAME = re.compile(r"[^ ,;{}()\n\t=`]+")
_PART = "_cdc_part"
_TID = "_cdc_table"
# Delta's type names where Spark's differ (tests name a delta-rs schema's types as Spark does with it)
SPARK_TYPE_NAMES = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
_DELTA_NAMES = {spark: delta for delta, spark in SPARK_TYPE_NAMES.items()}
_SPARK_FEATURES = frozenset({"deletionVectors", "columnMapping"})
_SPARK_SETTINGS = {"delta.enableDeletionVectors": "true", "delta.columnMapping.mode": "name"}


def max_rows(spark: SparkSession) -> int:
    return int(spark.conf.get(MAX_ROWS_SETTING, str(DEFAULT_MAX_ROWS)))


def takes(paths: TablePaths, columns: list[ColumnPlan], rows: int | None, existed: bool, limit: int) -> bool:
    """Whether delta-rs writes this table's day: local, at most `limit` rows (`rows`: the larger of its
    current and history tables' rows after the day; None when not known), plain column names, and,
    where it exists, a table that was not Spark's (no deletion vectors or column mapping)."""
    if limit <= 0 or rows is None or rows > limit:
        return False
    if local_table_path(paths.current) is None or local_table_path(paths.history) is None:
        return False
    if not all(_PLAIN_NAME.fullmatch(c.name) for c in columns):
        return False
    return not existed or not any(_spark_owned(p) for p in (paths.current, paths.history))


def _spark_owned(path: str) -> bool:
    from deltalake import DeltaTable

    return _is_spark_owned(DeltaTable(local_table_path(path)))


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


def live_keys(path: str) -> tuple[list[ColumnPlan], pa.Array] | None:
    """The source columns and live keys (`_cdc_key`) of a current table delta-rs wrote, read without
    Spark; None where there is no such table (none at all, elsewhere, or Spark's)."""
    table = _delta_rs_table(path)
    if table is None:
        return None
    columns = [ColumnPlan(f.name, SPARK_TYPE_NAMES.get(f.type.type, f.type.type))
               for f in table.schema().fields if f.name not in CDC_COLUMNS]  # fmt: skip
    return columns, table.to_pyarrow_table(columns=["_cdc_key"]).column("_cdc_key").combine_chunks()


def take_over(spark: SparkSession, paths: TablePaths) -> None:
    """Give a table delta-rs wrote Spark's settings (deletion vectors, column mapping) before Spark's first
    MERGE into it; nothing for a table that has them. Judged by the settings, not the protocol: a RESTORE
    to a version before a take-over brings the old settings back but keeps the protocol's features."""
    from deltalake import DeltaTable

    for path in (paths.current, paths.history):
        local = local_table_path(path)
        if local is None:
            continue
        table = DeltaTable(local)
        if all(table.metadata().configuration.get(k) == v for k, v in _SPARK_SETTINGS.items()):
            continue
        # a table without table features needs column mapping's protocol named (one with them takes the feature)
        legacy = table.protocol().min_writer_version < 7
        versions = {"delta.minReaderVersion": "2", "delta.minWriterVersion": "5"} if legacy else {}
        settings = ", ".join(f"'{k}' = '{v}'" for k, v in {**PROPERTIES, **versions}.items())
        spark.sql(f"ALTER TABLE delta.{quote(path)} SET TBLPROPERTIES ({settings})")


def rows_of(path: str) -> int | None:
    """The rows of a table delta-rs wrote, from its files' statistics (no scan); None for any other."""
    table = _delta_rs_table(path)
    if table is None:
        return None
    return file_rows(table)


def evolve_columns(paths: TablePaths, day: list[ColumnPlan], held: list[ColumnPlan]) -> list[ColumnPlan] | None:
    """Bring an existing table's columns to the day's by delta-rs (both tables): columns added, numbers
    widened to a wider decimal (an exact cast), columns widened to text (`as_text`), the table rewritten
    once; the columns after. None when a `timestamp` column becomes text (Spark's `tables.prepare` rewrites
    it, printed in the session's time zone) or a column needs a table feature the table may lack
    (`timestamp_ntz`)."""
    from deltalake import DeltaTable, Field, write_deltalake
    from deltalake.schema import PrimitiveType

    added, changed, after = evolve(day, held)
    if any(new == "string" and not _printed(old) for old, new in changed.values()):
        return None
    if any(c.spark_type == "timestamp_ntz" for c in added):
        return None
    for path in (local_table_path(paths.current), local_table_path(paths.history)):
        if added:
            fields = [Field(c.name, PrimitiveType(_DELTA_NAMES.get(c.spark_type, c.spark_type))) for c in added]
            DeltaTable(path).alter.add_columns(fields)
        if changed:
            data = DeltaTable(path).to_pyarrow_table()
            for name, (old, new) in changed.items():
                if new == "string":
                    column = as_text(data.column(name), old)
                else:
                    precision, scale = re.fullmatch(r"decimal\((\d+),(\d+)\)", new).groups()
                    column = data.column(name).cast(pa.decimal128(int(precision), int(scale)))  # exact, or raises
                data = data.set_column(data.schema.get_field_index(name), name, column)
            write_deltalake(path, data, mode="overwrite", schema_mode="overwrite")
    return after


# the types whose values `as_text` prints as Spark does, besides decimals (`timestamp` is printed in the
# session's time zone: Spark's)
_PRINTED = ("boolean", "bigint", "binary", "date", "timestamp_ntz")


def _printed(type_name: str) -> bool:
    return type_name in _PRINTED or type_name.startswith("decimal(")


def days_rows(spark: SparkSession, applied: Applied, plans: Mapping[tuple, list[ColumnPlan]]) -> dict[tuple, pa.Table]:
    """The day of each table `plans` names (with its columns), as the MERGEs read it, typed by Spark as
    they type it (`typed_value`), in one collect for all of them: a collect per table was a Spark job per
    table (0.3-0.6 s each). Each table's rows: current rows (`_cdc_part` `current`), the versions opened
    (`open`) and the open versions ended (`close`).

    The tables' typed columns share one column per name and type (`_c0`, `_c1`, ...), set for the rows of
    the tables that have it, so the collected frame is as wide as the distinct columns, not their sum."""
    tables = list(plans)
    schema = ", ".join([*(f"{c} string" for c in TABLE), f"{_TID} int"])
    index = spark.createDataFrame([(*t, i) for i, t in enumerate(tables)], schema)
    slots: dict[tuple[str, str], int] = {}
    having: dict[int, list[int]] = {}
    for i, table in enumerate(tables):
        for column in plans[table]:
            having.setdefault(slots.setdefault((column.name, column.spark_type), len(slots)), []).append(i)
    parts = (
        applied.net.select(*TABLE, "_k", "row", "_cdc_op", "_cdc_event_time", "_cdc_event_id",
                           F.col("kind").alias(KIND), F.lit("current").alias(_PART)),
        applied.opened.select(*TABLE, "_k", "row", "_cdc_op", "_cdc_event_id", "_cdc_start_at", "_cdc_end_at",
                              F.lit("open").alias(KIND), F.lit("open").alias(_PART)),
        applied.closed.select(*TABLE, "_k", "_cdc_end_at", F.lit("close").alias(KIND), F.lit("close").alias(_PART)),
    )  # fmt: skip
    frame = parts[0].unionByName(parts[1], allowMissingColumns=True).unionByName(parts[2], allowMissingColumns=True)
    on = [frame[c].eqNullSafe(index[c]) for c in TABLE]
    frame = frame.join(F.broadcast(index), on[0] & on[1] & on[2])
    typed = [
        F.when(F.col(_TID).isin(having[slot]), typed_value(F.try_element_at("row", F.lit(name)), type_name)).alias(
            f"_c{slot}"
        )
        for (name, type_name), slot in slots.items()
    ]
    cdc = sorted({name for name, _ in (*CURRENT_CDC, *HISTORY_CDC)} - {"_cdc_key"})
    rows = frame.select(_TID, _PART, KIND, *cdc, F.col("_k").alias("_cdc_key"), *typed).toArrow()
    out = {}
    for i, table in enumerate(tables):
        own = rows.filter(pc.equal(rows[_TID], i))
        extra = [_PART, KIND, *cdc, "_cdc_key"]
        picked = own.select([f"_c{slots[c.name, c.spark_type]}" for c in plans[table]] + extra)
        out[table] = picked.rename_columns([c.name for c in plans[table]] + extra)
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
    when no key of the day was live (`fresh`), else one MERGE each as `tables.merge_current` and
    `tables.merge_history` do. Returns the rows the current table gained less those it lost."""
    from deltalake import DeltaTable, write_deltalake

    current_names = _names(columns, CURRENT_CDC)
    history_names = _names(columns, HISTORY_CDC)
    current = _part(rows, "current", [*current_names, KIND])
    opened = _part(rows, "open", [*history_names, KIND])
    closes = _part(rows, "close", ["_cdc_key", "_cdc_end_at", KIND])
    current_path, history_path = local_table_path(paths.current), local_table_path(paths.history)
    if not existed:
        properties = {k: v for k, v in PROPERTIES.items() if k == "delta.autoOptimize.optimizeWrite"}
        # version 0 is the empty table, as Spark's create makes it: what a backfill of the first day restores
        DeltaTable.create(current_path, current.drop([KIND]).schema, configuration=properties)
        DeltaTable.create(history_path, opened.drop([KIND]).schema, configuration=properties)
    if fresh:
        sets = current.filter(pc.equal(current[KIND], "set")).drop([KIND])
        write_deltalake(current_path, sets, mode="append")
        write_deltalake(history_path, opened.drop([KIND]), mode="append")
        return sets.num_rows
    merge = (
        DeltaTable(current_path)
        .merge(current, "t._cdc_key = s._cdc_key", source_alias="s", target_alias="t")
        .when_matched_delete(f"s.{KIND} = 'del'")
        .when_matched_update_all(f"s.{KIND} = 'set'", except_cols=[KIND])
        .when_not_matched_insert_all(f"s.{KIND} = 'set'", except_cols=[KIND])
    )
    if truncated:
        merge = merge.when_not_matched_by_source_delete()
    metrics = merge.execute()
    (
        DeltaTable(history_path)
        .merge(
            pa.concat_tables([opened, closes], promote_options="default"),
            f"t._cdc_key = s._cdc_key AND t._cdc_end_at IS NULL AND s.{KIND} = 'close'",
            source_alias="s",
            target_alias="t",
        )  # fmt: skip
        .when_matched_update({"_cdc_end_at": "s._cdc_end_at"})
        .when_not_matched_insert_all(f"s.{KIND} = 'open'", except_cols=[KIND])
        .execute()
    )
    return metrics["num_target_rows_inserted"] - metrics["num_target_rows_deleted"]


def version(path: str) -> int:
    from deltalake import DeltaTable

    return DeltaTable(local_table_path(path)).version()


def restore(path: str, version: int) -> bool:
    """Restore a table delta-rs wrote to `version` (nothing when it is there): 20-50 ms, where Spark's
    RESTORE is 1-3 s of jobs a table. False for a table that is not delta-rs's (Spark restores it)."""
    table = _delta_rs_table(path)
    if table is None:
        return False
    if table.version() != version:
        table.restore(version)
    return True
