"""The one SparkSession of a process, configured for exact, reproducible CDC work."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

DEFAULT_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.parquet.compression.codec": "zstd",
    "spark.driver.memory": "2g",
    "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
}


def spark_session(
    master: str | None = None, conf: dict[str, str] | None = None, app_name: str = "cdc_pipelines"
) -> SparkSession:
    """Get or build the process's SparkSession (`local[*]` unless a master is given).

    Python workers must run this interpreter: `mapInArrow` fails on a machine whose system Python
    lacks pyarrow, so PYSPARK_PYTHON is pinned to `sys.executable` before the JVM starts.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(master or os.environ.get("CDC_SPARK_MASTER", "local[*]"))
    for key, value in {**DEFAULT_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
