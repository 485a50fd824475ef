"""A snapshot column's plan (its name and Spark type) and Spark's typing of its text values in the
writes Spark runs.

The rules that decide a column's type (its figures, `spark_type`, `widen`) and find the values that fail
it are `values`', over Arrow, for both engines; here is only how Spark's writes type a value once the type
is decided (`typed_value`, held to `values.typed_array` by tests/snapshots/test_values.py) and print it
back for a column widened to text (`as_text`).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from cdc_pipelines.model.column_types import widen
from cdc_pipelines.snapshots.values import ColumnPlan, spark_type

__all__ = ["ColumnPlan", "as_text", "spark_type", "typed_value", "widen"]


def as_text(column: Column, type_name: str) -> Column:
    """A typed column's values as text, for a column widened to `string` (bytes as base64, as in the images)."""
    return F.base64(column) if type_name == "binary" else column.cast("string")


def typed_value(value: Column, spark_type_name: str) -> Column:
    if spark_type_name == "boolean":
        return value == "true"
    if spark_type_name == "binary":
        return F.unbase64(value)
    if spark_type_name == "string":
        return value
    return value.try_cast(spark_type_name)
