"""Writing test lakes: a DataFrame's partitions written as the runs write theirs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import DataFrame

from cdc_pipelines.lake.io import Commit, replace_partitions
from cdc_pipelines.model.canonical import PARTITION_COLUMNS


def write_partitions(df: DataFrame, path: str | Path, partition_by: Sequence[str] = PARTITION_COLUMNS) -> Commit:
    """`replace_partitions` of the partitions `df` holds (found by a distinct job over `df`)."""
    held = [row.asDict() for row in df.select(*partition_by).distinct().collect()]
    return replace_partitions(df, path, held, partition_by)
