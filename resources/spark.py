"""The Spark session resource: dagster-pyspark's lazy resource with the project's Spark settings.

Lazy, so a step that does not touch Spark starts no JVM; `spark.master` and any other Spark setting
can be overridden (e.g. a cluster master) through `spark_config` or CDC_SPARK_MASTER.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from dagster_pyspark import LazyPySparkResource

from cdc_pipelines.spark import DEFAULT_CONF, ship_package


class ProjectSparkResource(LazyPySparkResource):
    """dagster-pyspark's lazy session, plus this project's package shipped to a cluster's executors."""

    @property
    def spark_session(self) -> Any:
        session = super().spark_session
        ship_package(session)
        return session


def spark_resource(**overrides: str) -> LazyPySparkResource:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = {"spark.master": os.environ.get("CDC_SPARK_MASTER", "local[*]"), "spark.app.name": "cdc_pipelines"}
    return ProjectSparkResource(spark_config={**conf, **DEFAULT_CONF, **overrides})
