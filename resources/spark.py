"""The Spark session resource: dagster-pyspark's lazy resource with the project's Spark settings.

Lazy, so a step that does not touch Spark starts no JVM. Its settings are the CLI's (`session_conf`:
Delta, the S3/OSS jars, the quiet console), then CDC_SPARK_CONF (a JSON object of Spark and Hadoop
settings, as `--conf` gives them to a command), then `overrides`; CDC_SPARK_MASTER names a cluster.
A run's steps share one JVM (`assets/graph.py`: the in-process executor), a long run: it starts with both
JIT compilers (`full_jit`; the daily job's day 2 of 200,000 canal messages 70.4 s instead of 78.6 s).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from dagster_pyspark import LazyPySparkResource
from dagster_pyspark.resources import spark_session_from_config

from cdc_pipelines.runtime.session import full_jit, session_conf, ship_package, with_fetched_jars


class ProjectSparkResource(LazyPySparkResource):
    """dagster-pyspark's lazy session, its jars fetched first when never resolved (one progress line, not Ivy's
    listing), plus this project's package shipped to a cluster's executors."""

    def _init_session(self) -> None:
        if self._spark_session is None:
            self._spark_session = spark_session_from_config(with_fetched_jars(self.spark_config))

    @property
    def spark_session(self) -> Any:
        session = super().spark_session
        ship_package(session)
        return session


def spark_resource(**overrides: str) -> LazyPySparkResource:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return ProjectSparkResource(spark_config={"spark.app.name": "cdc_pipelines", **session_conf(full_jit(overrides))})
