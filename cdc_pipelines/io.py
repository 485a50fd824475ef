"""Reading raw topic extracts and writing partitioned outputs.

Extracts are files of one message per line (plain or compressed; Hadoop picks the codec from the
extension). Lineage needs the 1-based line number of each message, which Spark's file readers do not
give: each file split is read in order, so a line's number is its position inside its split plus the
line count of the earlier splits of the same file, worked out from a small per-split aggregate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from cdc_pipelines.canonical import PARTITION_COLUMNS
from cdc_pipelines.commit import replace_partitions
from cdc_pipelines.extracts.files import InputError, list_input_files, list_input_files_or_empty  # noqa: F401


def read_lines(spark: SparkSession, files: list[str]) -> DataFrame:
    """One row per input line: `value`, `source_file`, `source_line` (1-based)."""
    raw = spark.read.text(files).select(
        "value",
        F.col("_metadata.file_path").alias("source_file"),
        F.col("_metadata.file_block_start").alias("_block"),
        F.monotonically_increasing_id().alias("_row"),
    )
    splits = raw.groupBy("source_file", "_block").agg(F.min("_row").alias("_first"), F.count("*").alias("_n"))
    earlier = Window.partitionBy("source_file").orderBy("_block").rowsBetween(Window.unboundedPreceding, -1)
    splits = splits.select(
        "source_file", "_block", "_first", F.coalesce(F.sum("_n").over(earlier), F.lit(0)).alias("_before")
    )
    return raw.join(F.broadcast(splits), ["source_file", "_block"]).select(
        "value",
        "source_file",
        (F.col("_row") - F.col("_first") + F.col("_before") + 1).alias("source_line"),
    )


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
