"""The lake's Delta tables: replacing whole partitions in one Delta commit, and reading tables back.

A write replaces exactly the partitions it names (`replaceWhere` over their partition values), so a
rerun is a new table version with the same rows, older versions stay readable, and writers of other
partitions commit side by side (Delta's optimistic concurrency: their predicates do not overlap). Two
writers of the same partition conflict: Delta raises its concurrent-modification error and the later
one fails loudly (`PartitionConflictError`), never half-merged.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines.lake.partition_paths import partition_dir
from cdc_pipelines.model.canonical import PARTITION_COLUMNS
from cdc_pipelines.model.schema import CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.runtime import storage

DELTA = "delta"
_COMMIT_FILE = re.compile(r"[0-9]{20}\.json")
CREATE_ATTEMPTS = 5
# where the lake's tables are registered in the session's catalog (a metastore on a cluster), if set
CATALOG_DATABASE = "spark.cdc.catalog.database"


class PartitionConflictError(RuntimeError):
    """Another run committed to the same partitions while this one wrote them."""


@dataclass(frozen=True)
class Commit:
    """A table's path and the version a write committed (what `VERSION AS OF` reads back)."""

    path: str
    version: int


def sql_literal(value: str) -> str:
    """`value` as a Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def partition_predicate(partitions: Iterable[Mapping[str, str]], partition_by: Sequence[str]) -> str:
    """`(dt = '2024-01-01' AND source_topic IN ('a', 'b')) OR ...`: exactly the named partitions."""
    *outer, last = partition_by
    groups: dict[tuple[str, ...], set[str]] = {}
    for values in partitions:
        groups.setdefault(tuple(values[c] for c in outer), set()).add(values[last])
    terms = []
    for key, lasts in sorted(groups.items()):
        parts = [f"`{c}` = {sql_literal(v)}" for c, v in zip(outer, key, strict=True)]
        parts.append(f"`{last}` IN ({', '.join(sql_literal(v) for v in sorted(lasts))})")
        terms.append("(" + " AND ".join(parts) + ")")
    return " OR ".join(terms) or "false"


def is_table(spark: SparkSession, path: str | Path) -> bool:
    from delta.tables import DeltaTable

    return bool(DeltaTable.isDeltaTable(spark, str(path)))


def ensure_table(
    spark: SparkSession,
    path: str | Path,
    schema: T.StructType,
    partition_by: Sequence[str],
    properties: Mapping[str, str] | None = None,
) -> None:
    """Create the Delta table at `path` unless it exists; a concurrent creator's table is taken as is."""
    from delta.tables import DeltaTable

    for attempt in range(CREATE_ATTEMPTS):
        if is_table(spark, path):
            return
        try:
            builder = DeltaTable.createIfNotExists(spark).location(str(path)).addColumns(schema)
            for key, value in (properties or {}).items():
                builder = builder.property(key, value)
            builder.partitionedBy(*partition_by).execute()
            return
        except Exception:  # noqa: BLE001 - lost the race to create version 0; the winner's table is there
            if attempt == CREATE_ATTEMPTS - 1:
                raise


def replace_partitions(
    df: DataFrame,
    path: str | Path,
    replace: Iterable[Mapping[str, str]],
    partition_by: Sequence[str] = PARTITION_COLUMNS,
    schema: T.StructType | None = None,
    register_as: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> Commit:
    """Replace the partitions in `replace` with the rows of `df` (which must all fall in them) in one
    Delta commit; a partition `df` has no rows for ends up empty. Returns the commit's version.

    With `register_as`, the table is also named in the session's catalog (see `register_table`);
    `properties` are the table's Delta properties when this write creates it."""
    spark = df.sparkSession
    path = str(path)
    schema = schema or df.schema
    ensure_table(spark, path, schema, partition_by, properties)
    before = table_version(spark, path)
    tag = uuid.uuid4().hex
    writer = (
        df.select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])
        .write.format(DELTA)
        .mode("overwrite")
        .option("replaceWhere", partition_predicate(list(replace), partition_by))
        .option("mergeSchema", "true")  # a column a newer release adds (counts' `filtered`) joins the table
        .option("userMetadata", json.dumps({"cdc_run": tag}))
    )
    try:
        writer.save(path)
    except Exception as error:
        if "Concurrent" in type(error).__name__ or "DELTA_CONCURRENT" in str(error):
            raise PartitionConflictError(
                f"another run replaced the same partitions of {path} while this one wrote them: {error}"
            ) from error
        raise
    if register_as:
        register_table(spark, register_as, path)
    return Commit(path, committed_version(spark, path, tag, before))


def replace_rows(
    spark: SparkSession | None,
    rows: list[tuple],
    path: str,
    replace: Iterable[Mapping[str, str]],
    schema: T.StructType,
    register_as: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> None:
    """`replace_partitions` of rows the driver holds (tuples in `schema`'s order): by delta-rs where the
    table is local (tens of milliseconds, where Spark's write of a rejects or counts table is 1-3 s of
    jobs and commit), else by Spark. No `spark`: a local table, registered in no catalog."""
    from cdc_pipelines.lake import delta_rs

    local = delta_rs.local_table_path(path)
    if local is None:
        frame = spark.createDataFrame(rows, schema)
        replace_partitions(frame, path, replace, schema=schema, register_as=register_as, properties=properties)
        return
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema.fields]
    target = delta_rs.arrow_schema(schema)
    data = pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, target, strict=True)], schema=target)
    delta_rs.replace_partitions(data, local, list(replace), schema, PARTITION_COLUMNS, properties)
    if register_as and spark is not None:
        register_table(spark, register_as, path)


def register_table(spark: SparkSession, name: str, path: str) -> None:
    """`<database>.<name>` for the Delta table at `path`, when `spark.cdc.catalog.database` names a
    database: clusters with a metastore (Hive, Glue, Unity) then list the lake's tables by name."""
    database = spark.conf.get(CATALOG_DATABASE, None)
    if not database:
        return
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    spark.sql(f"CREATE TABLE IF NOT EXISTS `{database}`.`{name}` USING delta LOCATION {sql_literal(path)}")


def committed_version(spark: SparkSession, path: str, tag: str, before: int | None) -> int:
    """The version of the commit tagged `tag`, made after version `before` (others may have committed
    since): the newest commit file holding the tag, read back from the latest (one small file read,
    where a history query is a Spark job). A write that had nothing to add or remove (no rows, the
    partitions already empty) commits nothing: the table's latest version then stands for it."""
    latest = table_version(spark, path)
    log = storage.join(path, "_delta_log")
    for version in range(latest, -1 if before is None else before, -1):
        if tag.encode() in storage.read_bytes(spark, storage.join(log, f"{version:020d}.json")):
            return version
    return latest


def table_version(spark: SparkSession | None, path: str | Path) -> int | None:
    """The latest version of the table at `path`, or None where there is no table.

    The highest commit file (`_delta_log/<version>.json`) is the latest version by Delta's protocol;
    one listing finds it, where a history query is a Spark job (a snapshot day asked a dozen times).
    """
    log_names = storage.names(spark, storage.join(str(path), "_delta_log"))
    return max((int(name[:-5]) for name in log_names if _COMMIT_FILE.fullmatch(name)), default=None)


def read_table(spark: SparkSession, path: str | Path, schema: T.StructType, version: int | None = None) -> DataFrame:
    """The Delta table at `path` (at `version`, or the latest) with `schema`; empty where there is none.
    A column of `schema` the table lacks (written before a release added it) reads as null."""
    if not is_table(spark, path):
        return spark.createDataFrame([], schema)
    reader = spark.read.format(DELTA)
    if version is not None:
        reader = reader.option("versionAsOf", version)
    frame = reader.load(str(path))
    held = set(frame.columns)
    return frame.select(
        *[(F.col(f.name) if f.name in held else F.lit(None)).cast(f.dataType).alias(f.name) for f in schema.fields]
    )


def read_canonical(spark: SparkSession, path: str | Path, version: int | None = None) -> DataFrame:
    """The canonical change table at `path`, with its declared schema."""
    return read_table(spark, path, CANONICAL_SCHEMA, version)


def read_rejects(spark: SparkSession, path: str | Path, version: int | None = None) -> DataFrame:
    """The rejects table at `path`, with its declared schema."""
    return read_table(spark, path, REJECTS_SCHEMA, version)


def overwrite_file_partitions(
    df: DataFrame, path: str | Path, partitions: Iterable[Mapping[str, str]], filled: Iterable[Mapping[str, str]]
) -> None:
    """Text files (not a table) for systems that read folders: Spark's dynamic partition overwrite
    replaces the partitions `df` writes, and those of `partitions` not in `filled` (the ones `df` has
    rows for) are removed, so a rerun leaves nothing stale.

    Spark's committer replaces each partition folder at job commit; between its delete and its rename
    a reader can see a partition missing. That is what these outputs' consumers get from Spark anyway.
    """
    partitions = [dict(p) for p in partitions]
    filled = [dict(p) for p in filled]
    if filled:
        writer = df.write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
        writer.partitionBy(*PARTITION_COLUMNS).text(str(path))
    for partition in partitions:
        if partition not in filled:
            storage.delete(df.sparkSession, storage.join(path, partition_dir(partition, PARTITION_COLUMNS)))
