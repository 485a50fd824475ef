"""An existing lake of plain Parquet folders (written by versions before Delta) converted in place.

`CONVERT TO DELTA` writes a Delta log over the Parquet files already there (no data is rewritten),
taking the partition values from the `dt=.../source_topic=...` folder names, escaped ones (`a%2Fb`)
included. The old run counts, JSON files per partition, become rows of the `counts` Delta table.
"""

from __future__ import annotations

import json

from pyspark.sql import SparkSession

from cdc_pipelines.lake.io import is_table, table_version
from cdc_pipelines.lake.layout import COUNTS_DIR, DECODED_TABLES
from cdc_pipelines.lake.partition_paths import unescape_value
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.runtime import storage

PARTITIONED_BY = "PARTITIONED BY (dt STRING, source_topic STRING)"
OLD_COUNTS_FILE = "counts.json"


def convert_table(spark: SparkSession, path: str) -> int | None:
    """Convert the Parquet folder `path` to Delta (a Delta table is left as it is); its version."""
    if not is_table(spark, path) and storage.is_dir(spark, path):
        spark.sql(f"CONVERT TO DELTA parquet.`{path}` {PARTITIONED_BY}")
    return table_version(spark, path)


def convert_counts(spark: SparkSession, lake: str) -> int:
    """The old `counts/dt=/source_topic=/counts.json` files as rows of the counts table; files converted."""
    folder = storage.join(lake, COUNTS_DIR)
    if is_table(spark, folder) or not storage.is_dir(spark, folder):
        return 0
    found: dict[str, dict[str, dict[str, int]]] = {}
    files = [f for f in storage.list_files(spark, folder) if f.endswith("/" + OLD_COUNTS_FILE)]
    for path in files:
        dt_part, topic_part = path.rsplit("/", 3)[1:3]
        dt, topic = (unescape_value(p.split("=", 1)[1]) for p in (dt_part, topic_part))
        found.setdefault(dt, {})[topic] = json.loads(storage.read_bytes(spark, path))
    storage.delete(spark, folder)  # the counts table is created where the folders were
    for dt, per_topic in sorted(found.items()):
        write_counts(spark, lake, dt, per_topic)
    return len(files)


def convert_lake(spark: SparkSession, lake: str) -> dict:
    """Convert `changes/`, `rejects/` and `counts/` under `lake`; each table's Delta version."""
    versions = {name: convert_table(spark, storage.join(lake, name)) for name in DECODED_TABLES}
    return {**versions, "counts_files": convert_counts(spark, lake)}
