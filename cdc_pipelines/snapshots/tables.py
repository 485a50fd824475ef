"""One source table's two Delta tables, written by Spark: created, their columns widened, a day MERGEd in.

Created with deletion vectors (a MERGE marks the rows it replaces instead of rewriting their files) and
column mapping by name (any source column name works); version 0 is the empty table a backfill of the
table's first day restores. A day's new columns are added (`ADD COLUMNS`) before its writes; a column
whose type widens has the table rewritten once, cast (delta-rs 1.6 cannot read Delta's type widening
feature). Columns a day's images lack are null in its rows, so dropped columns stay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.lake.io import DELTA, table_version
from cdc_pipelines.model.column_types import widen
from cdc_pipelines.snapshots import merges
from cdc_pipelines.snapshots.merges import KIND
from cdc_pipelines.snapshots.schema import CDC_COLUMNS, CURRENT_CDC, HISTORY_CDC
from cdc_pipelines.snapshots.values import ColumnPlan, typed_array, widened

PROPERTIES = {
    "delta.enableDeletionVectors": "true",
    "delta.columnMapping.mode": "name",
    # a MERGE writes one file per task of its source otherwise: a day's few rows spread over many tiny files
    "delta.autoOptimize.optimizeWrite": "true",
}
_CLOSED_AT = "_cdc_closed_at"  # `replace_history`'s own column: when the day ended an open version


@dataclass(frozen=True)
class TablePaths:
    current: str
    history: str


def quote(name: str) -> str:
    """A column name as a Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def source_columns(schema: T.StructType) -> list[ColumnPlan]:
    """The source columns of a current table's `schema` and their types, in table order."""
    return [ColumnPlan(f.name, f.dataType.simpleString()) for f in schema.fields if f.name not in CDC_COLUMNS]


def _create(spark: SparkSession, path: str, columns: list[ColumnPlan], cdc: tuple) -> None:
    from delta.tables import DeltaTable

    builder = DeltaTable.createIfNotExists(spark).location(path)
    for name, type_name in [(c.name, c.spark_type) for c in columns] + list(cdc):
        builder = builder.addColumn(name, type_name)
    for key, value in PROPERTIES.items():
        builder = builder.property(key, value)
    builder.execute()


def _widened(batches: Iterable[pa.RecordBatch], types: Mapping[str, tuple[str, str]]) -> Iterator[pa.RecordBatch]:
    """Each column `types` names in its wider type (`values.widened`)."""
    for batch in batches:
        columns = dict(zip(batch.schema.names, batch.columns, strict=True))
        for name, (old, new) in types.items():
            columns[name] = widened(columns[name], old, new)
        yield pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


def _rewrite(spark: SparkSession, path: str, types: dict[str, tuple[str, str]]) -> None:
    """Rewrite the table once with each column `types` names (`(old, new)` type) cast to its new type."""
    frame = spark.read.format(DELTA).load(path)
    schema = T.StructType([T.StructField(f.name, T._parse_datatype_string(types[f.name][1]))
                           if f.name in types else f for f in frame.schema.fields])  # fmt: skip
    frame = frame.mapInArrow(lambda batches: _widened(batches, types), schema)
    frame.write.format(DELTA).mode("overwrite").option("overwriteSchema", "true").save(path)


def column_order(day: list[ColumnPlan], pk_columns: list[str]) -> list[ColumnPlan]:
    """A new table's columns: the key's first, in key order, then the others by name."""
    rank = {c: i for i, c in enumerate(pk_columns)}
    return sorted(day, key=lambda p: (rank.get(p.name, len(rank)), p.name))


def prepare(
    spark: SparkSession, paths: TablePaths, day: list[ColumnPlan], pk_columns: list[str], held: list[ColumnPlan] | None
) -> list[ColumnPlan]:
    """Create the two tables (`held` None) or bring their columns (`held`, as the day's read of the
    current table found them: no second load of its log) to hold the day's (`day`); the columns after."""
    if held is None:
        ordered = column_order(day, pk_columns)
        _create(spark, paths.current, ordered, CURRENT_CDC)
        _create(spark, paths.history, ordered, HISTORY_CDC)
        return ordered
    added, changed, after = evolve(day, held)
    for path in (paths.current, paths.history):
        # a history keeps a column its current table dropped (`schema_day`): added where missing
        missing = [c for c in added if c.name not in set(spark.read.format(DELTA).load(path).columns)] if added else []
        if missing:
            spec = ", ".join(f"{quote(c.name)} {c.spark_type}" for c in missing)
            spark.sql(f"ALTER TABLE delta.{quote(path)} ADD COLUMNS ({spec})")
        if changed:
            _rewrite(spark, path, changed)
    return after


def evolve(
    day: list[ColumnPlan], held: list[ColumnPlan]
) -> tuple[list[ColumnPlan], dict[str, tuple[str, str]], list[ColumnPlan]]:
    """What a table holding `held` needs to hold the day's columns: the columns it adds, the columns whose
    type widens (`(old, new)`), and its columns after."""
    columns = {c.name: c.spark_type for c in held}
    added = [c for c in day if c.name not in columns]
    wider = {c.name: widen(columns[c.name], c.spark_type) for c in day if c.name in columns}
    changed = {name: (columns[name], t) for name, t in wider.items() if t != columns[name]}
    return added, changed, [ColumnPlan(name, wider.get(name, t)) for name, t in columns.items()] + added


def _typed_batches(
    batches: Iterable[pa.RecordBatch], columns: list[ColumnPlan], kept: list[str]
) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        row = batch.column("row")
        typed = [typed_array(pc.map_lookup(row, c.name, "first"), c.spark_type) for c in columns]
        yield pa.RecordBatch.from_arrays([*typed, *map(batch.column, kept)], names=[*(c.name for c in columns), *kept])


def typed_rows(frame: DataFrame, columns: list[ColumnPlan], cdc: tuple) -> DataFrame:
    """`frame`'s `row` values typed as `columns` by `values.typed_array` (the local engine's one typing
    rule, run in `mapInArrow`), beside its `cdc` columns (`_k` as `_cdc_key`)."""
    frame = frame.withColumnRenamed("_k", "_cdc_key")
    kept = [name for name, _ in cdc]
    fields = [T.StructField(c.name, T._parse_datatype_string(c.spark_type)) for c in columns]
    fields += [T.StructField(name, frame.schema[name].dataType) for name in kept]
    return frame.select("row", *kept).mapInArrow(lambda b: _typed_batches(b, columns, kept), T.StructType(fields))


def _set_rows(net: DataFrame, columns: list[ColumnPlan]) -> DataFrame:
    """The current table's rows of the keys the day leaves set."""
    return typed_rows(net.where(F.col("kind") == "set"), columns, CURRENT_CDC)


_SPARK_CLAUSES = {merges.MATCHED_DELETE: "whenMatchedDelete", merges.MATCHED_UPDATE: "whenMatchedUpdate",
                  merges.NOT_MATCHED_INSERT: "whenNotMatchedInsert",
                  merges.NOT_MATCHED_BY_SOURCE_DELETE: "whenNotMatchedBySourceDelete"}  # fmt: skip


def _merged(
    spark: SparkSession, path: str, source: DataFrame, merge: merges.Merge, keys: list[str] | None
) -> DataFrame:
    """`merge` (`merges`) rendered with Spark's Delta API and run; its metrics. The day's `keys` are named on the
    target's key too, so Delta skips the target's files by them before the join (open-source Delta has no dynamic
    file pruning: docs/benchmarks-history.md)."""
    from delta.tables import DeltaTable

    on = F.expr(merge.on) if keys is None else F.expr(merge.on) & F.col("t._cdc_key").isin(keys)
    every = {quote(n): f"s.{quote(n)}" for n in source.columns if n != KIND}
    builder = DeltaTable.forPath(spark, path).alias("t").merge(source.alias("s"), on)
    for clause in merge.clauses:
        add = getattr(builder, _SPARK_CLAUSES[clause.action])
        deletes = clause.action.endswith("delete")
        builder = add(clause.condition) if deletes else add(clause.condition, dict(clause.assign or every))
    return builder.execute()


def merge_current(
    spark: SparkSession, path: str, net: DataFrame, columns: list[ColumnPlan], truncated: bool,
    keys: list[str] | None = None,
) -> int:  # fmt: skip
    """The day's net effect per key MERGEd (`merges.current_merge`), `keys` (at most `KEY_LITERALS`; none for a
    truncated table) named in the condition; the rows it added less those it removed, from its metrics."""
    source = typed_rows(net.withColumnRenamed("kind", KIND), columns, (*CURRENT_CDC, (KIND, "string")))
    metrics = _merged(spark, path, source, merges.current_merge(truncated), keys).first()
    return metrics["num_inserted_rows"] - metrics["num_deleted_rows"]


def append_current(net: DataFrame, path: str, columns: list[ColumnPlan]) -> None:
    """What `merge_current` does when no key of the day is in the table (a first day, keys all new):
    the set rows appended, without the MERGE's join with the table."""
    _set_rows(net, columns).write.format(DELTA).mode("append").save(path)


def merge_history(
    spark: SparkSession, path: str, opened: DataFrame, closed: DataFrame, columns: list[ColumnPlan],
    keys: list[str] | None = None,
) -> None:  # fmt: skip
    """The versions the day opened and the ends of those it closed MERGEd (`merges.history_merge`). `keys`: the
    day's keys (at most `KEY_LITERALS`; those it closes are among them unless a TRUNCATE closes the rest:
    none then), named in the condition."""
    closes = closed.select(F.col("_k").alias("_cdc_key"), "_cdc_end_at", F.lit("close").alias(KIND))
    opens = typed_rows(opened, columns, HISTORY_CDC).withColumn(KIND, F.lit("open"))
    _merged(spark, path, opens.unionByName(closes, allowMissingColumns=True), merges.history_merge(), keys)


def key_predicate(spark: SparkSession, keys: list[str]) -> str:
    """`_cdc_key IN (...)` as Delta's `replaceWhere` takes it, the keys as SQL string literals (Delta skips
    files by its statistics for literals, as for the MERGE's `isin`). Where the session reads literals
    raw (`spark.sql.parser.escapedStringLiterals`), no escape works inside one: a key's UTF-8 bytes in
    hex, decoded, instead."""
    if spark.conf.get("spark.sql.parser.escapedStringLiterals", "false").lower() == "true":
        values = [f"decode(unhex('{key.encode().hex()}'), 'UTF-8')" for key in keys]
    else:
        values = ["'" + key.replace("\\", "\\\\").replace("'", "\\'") + "'" for key in keys]
    return f"_cdc_key IN ({', '.join(values)})"


def replace_current(net: DataFrame, path: str, columns: list[ColumnPlan], keys: list[str]) -> None:
    """What `merge_current` does for a table the day does not truncate, its keys named (at most `KEY_LITERALS`):
    those keys' rows replaced by the day's set rows in one commit (`replaceWhere`, the old rows marked in a deletion
    vector), without the MERGE's join (docs/benchmarks-history.md, *keys replaced instead of MERGEd*)."""
    rows = _set_rows(net, columns)
    predicate = key_predicate(net.sparkSession, keys)
    rows.write.format(DELTA).mode("overwrite").option("replaceWhere", predicate).save(path)


def replace_history(
    spark: SparkSession, path: str, opened: DataFrame, closed: DataFrame, columns: list[ColumnPlan], keys: list[str],
    earliest_end: int | None,
) -> None:  # fmt: skip
    """What `merge_history` does for a table the day does not truncate, its keys named, in one commit (`replaceWhere`):
    those keys' versions that are open or end at or after `earliest_end` (epoch microseconds: the least end the day
    writes) replaced by themselves (the open ones ended where `closed` says) and the versions the day opened. Delta
    checks that every row written satisfies the predicate, so no version outside the day's is lost."""
    ends = closed.select(F.col("_k").alias("_cdc_key"), F.col("_cdc_end_at").alias(_CLOSED_AT))
    new = typed_rows(opened, columns, HISTORY_CDC)
    ended = f" OR _cdc_end_at >= timestamp_micros({earliest_end})" if earliest_end is not None else ""
    predicate = f"{key_predicate(spark, keys)} AND (_cdc_end_at IS NULL{ended})"
    table = spark.read.format(DELTA).load(path)
    names = [F.col(quote(c)) for c in table.columns]
    taken = table.where(predicate).join(F.broadcast(ends), "_cdc_key", "left")
    kept = taken.withColumn("_cdc_end_at", F.coalesce("_cdc_end_at", _CLOSED_AT)).select(*names)
    # a column the current table dropped (`schema_day`) is null in the day's new versions
    rows = kept.unionByName(new, allowMissingColumns=True)
    rows.write.format(DELTA).mode("overwrite").option("replaceWhere", predicate).save(path)


def append_history(opened: DataFrame, path: str, columns: list[ColumnPlan]) -> None:
    """What `merge_history` does when no version of the table was open before the day: nothing to close,
    the versions the day opened appended."""
    typed_rows(opened, columns, HISTORY_CDC).write.format(DELTA).mode("append").save(path)


def rename_columns(spark: SparkSession, path: str, pairs: list[tuple[str, str]]) -> None:
    """Each `(old, new)` column the table has renamed, in order: column mapping renames in the log alone."""
    for old, new in pairs:
        names = spark.read.format(DELTA).load(path).columns
        if old in names and new not in names:
            spark.sql(f"ALTER TABLE delta.{quote(path)} RENAME COLUMN {quote(old)} TO {quote(new)}")


def drop_columns(spark: SparkSession, path: str, names: list[str]) -> None:
    """The columns `names` the table has dropped: column mapping drops them in the log alone."""
    gone = [n for n in names if n in spark.read.format(DELTA).load(path).columns]
    if gone:
        spark.sql(f"ALTER TABLE delta.{quote(path)} DROP COLUMNS ({', '.join(map(quote, gone))})")


def carry(spark: SparkSession, source: str, target: str, cdc: tuple) -> None:
    """`target` created empty (version 0) with `source`'s columns, given its rows; `source` emptied (its
    versions stay, for a backfill to restore)."""
    from delta.tables import DeltaTable

    rows = spark.read.format(DELTA).load(source)
    _create(spark, target, source_columns(rows.schema), cdc)
    rows.write.format(DELTA).mode("append").save(target)
    DeltaTable.forPath(spark, source).delete()


def restore(spark: SparkSession, path: str, version: int) -> None:
    """The table as it was at `version` (a new version; nothing when it is that already)."""
    from delta.tables import DeltaTable

    if table_version(spark, path) != version:
        DeltaTable.forPath(spark, path).restoreToVersion(version)
