"""The lake's tables: partitioned writes that replace whole partitions atomically, and reading the
canonical table and the rejects back with their declared schemas (partition values stay text)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from cdc_pipelines.canonical import PARTITION_COLUMNS
from cdc_pipelines.lake.commit import replace_partitions


def write_partitioned(
    df: DataFrame,
    path: str | Path,
    partition_by: tuple[str, ...] = PARTITION_COLUMNS,
    text: bool = False,
    replace: Iterable[Mapping[str, str]] = (),
) -> None:
    """Write Parquet (or text lines) partitioned by `partition_by`, replacing only the partitions in `df`
    and those listed in `replace`, atomically per partition (see `commit`)."""
    replace_partitions(df, path, partition_by, text=text, replace=replace)


def read_canonical(spark: SparkSession, path: str | Path) -> DataFrame:
    """The canonical change table at `path`, with its declared schema (partition values stay text)."""
    from cdc_pipelines.schema import CANONICAL_SCHEMA

    return spark.read.schema(CANONICAL_SCHEMA).parquet(str(path))


def read_rejects(spark: SparkSession, path: str | Path) -> DataFrame:
    """The rejects dataset at `path`, with its declared schema."""
    from cdc_pipelines.schema import REJECTS_SCHEMA

    return spark.read.schema(REJECTS_SCHEMA).parquet(str(path))
