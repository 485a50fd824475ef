"""The Spark session resource: dagster-pyspark's lazy resource with the project's Spark settings.

Lazy, so a step that does not touch Spark starts no JVM; `spark.master` and any other Spark setting
can be overridden (e.g. a cluster master) through `spark_config` or CDC_SPARK_MASTER.
"""

from __future__ import annotations

import os
import sys

from dagster_pyspark import LazyPySparkResource

from cdc_pipelines.spark import DEFAULT_CONF


def spark_resource(**overrides: str) -> LazyPySparkResource:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = {"spark.master": os.environ.get("CDC_SPARK_MASTER", "local[*]"), "spark.app.name": "cdc_pipelines"}
    return LazyPySparkResource(spark_config={**conf, **DEFAULT_CONF, **overrides})
