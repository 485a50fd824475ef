"""The one SparkSession of a process, configured for exact, reproducible CDC work."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

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
    ship_package(session)
    return session


_SHIPPED: set[str] = set()


def ship_package(session: SparkSession) -> None:
    """On a cluster, send this process's `cdc_pipelines` to the executors (once per application).

    Python workers import the codecs the driver's functions name. Without this they import whatever
    package a worker machine has installed, or fail where it has none: on the test cluster that was
    another checkout's editable install, a different version of the code. The zip is served by the
    driver (`addPyFile`), so no shared filesystem is needed for it, and it comes first on the workers'
    `sys.path`. Local masters share the driver's interpreter setup and need nothing.
    """
    context = session.sparkContext
    if context.master.startswith("local") or context.applicationId in _SHIPPED:
        return
    context.addPyFile(str(package_zip()))
    _SHIPPED.add(context.applicationId)


def package_zip() -> Path:
    """`cdc_pipelines` (sources and package data, no bytecode) as a fresh zip in a temporary folder."""
    package = Path(__file__).resolve().parent
    folder = tempfile.mkdtemp(prefix="cdc_pipelines-")
    atexit.register(shutil.rmtree, folder, True)  # the driver serves it until the application ends
    target = Path(folder) / "cdc_pipelines.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, Path(package.name) / path.relative_to(package))
    return target
