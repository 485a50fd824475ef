"""A snapshot table's text values as typed columns, typed only where no value loses anything, and
types that only widen from one day to the next.

Each day, a column's Spark type is decided from figures over the values that day writes (one
aggregate, collected: one row per table and column): its logical types, whether every value is valid
for its type, and for INT / DECIMAL / temporal values whether they fit a long, a decimal(38) or
microseconds. A column whose values do not all fit is text. A value that is not valid for its logical
type at all (an INT `abc`) is an anomaly, and its column is text too, so the value is kept rather
than nulled. The table's column then takes the wider of its type so far and the day's (`widen`), so a
query over every day reads one column.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.snapshots.schema import TABLE
from cdc_pipelines.snapshots.values import spark_type, widen

__all__ = ["ColumnPlan", "as_text", "cells", "column_figures", "invalid_cells", "spark_type", "typed_value", "widen"]

_FRACTION = r"(\.[0-9]{1,9})?"
_VALID = {
    "BOOLEAN": lambda v: v.isin("true", "false"),
    "INT": lambda v: v.rlike("^[+-]?[0-9]+$"),
    "DECIMAL": lambda v: v.rlike(r"^[+-]?[0-9]+(\.[0-9]+)?$"),
    "DATE": lambda v: v.rlike("^[0-9]{4}-[0-9]{2}-[0-9]{2}$") & v.try_cast("date").isNotNull(),
    "TIMESTAMP": lambda v: (
        v.rlike(f"^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}{_FRACTION}Z$")
        & v.try_cast("timestamp").isNotNull()
    ),
    "DATETIME": lambda v: (
        v.rlike(f"^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}{_FRACTION}$")
        & v.try_cast("timestamp_ntz").isNotNull()
    ),
    "BYTES": lambda v: v.rlike("^[A-Za-z0-9+/]*={0,2}$") & (F.length(v) % 4 == 0),
}


@dataclass(frozen=True)
class ColumnPlan:
    name: str
    spark_type: str  # a Spark SQL type name; "string" keeps the text


def cells(state: DataFrame) -> DataFrame:
    """One row per (row, column) of the state: the table, column, value, logical type and event id."""
    return state.select(
        *TABLE, "_cdc_event_id", "column_types", F.explode("row").alias("column", "value")
    ).select(
        *TABLE, "_cdc_event_id", "column", "value",
        F.coalesce(F.try_element_at("column_types", F.col("column")), F.lit("UNKNOWN")).alias("logical"),
    )  # fmt: skip


def _valid(value: Column, logical: Column) -> Column:
    expr = F.lit(True)
    for name, check in _VALID.items():
        expr = F.when(logical == name, check(value)).otherwise(expr)
    return value.isNull() | F.coalesce(expr, F.lit(False))


def invalid_cells(state: DataFrame) -> DataFrame:
    """The values that are not valid for their logical type: the `cast_failed` anomalies."""
    c = cells(state)
    return c.where(~_valid(F.col("value"), F.col("logical"))).select(
        *TABLE,
        F.lit("cast_failed").alias("kind"),
        F.col("_cdc_event_id").alias("event_id"),
        F.lit(None).cast("string").alias("op"),
        F.concat(F.col("column"), F.lit(" is not "), F.col("logical"), F.lit(": "), F.col("value")).alias("detail"),
    )


def column_figures(state: DataFrame) -> DataFrame:
    """Per table and column: logical types seen and the figures that decide its Spark type. Each figure
    is computed only for the logical types it decides (a CASE evaluates one branch), so text cells pay
    for no number or time pattern."""
    c = cells(state)
    v, logical = F.col("value"), F.col("logical")
    number = logical.isin("INT", "DECIMAL")
    digits = F.when(number, F.length(F.regexp_extract(v, r"^[+-]?0*([0-9]*)", 1)))
    fraction = F.when(logical == "DECIMAL", F.length(F.regexp_extract(v, r"\.([0-9]+)", 1)))
    int_only = logical == "INT"
    return c.groupBy(*TABLE, "column").agg(
        F.collect_set("logical").alias("logicals"),
        F.bool_and(_valid(v, logical)).alias("valid"),
        F.bool_and(F.when(int_only, v.isNull() | v.try_cast("bigint").isNotNull())).alias("fits_long"),
        F.bool_and(F.when(int_only, v.isNull() | v.try_cast("decimal(38,0)").isNotNull())).alias("fits_decimal38"),
        F.coalesce(F.max(digits), F.lit(0)).alias("int_digits"),
        F.coalesce(F.max(fraction), F.lit(0)).alias("scale"),
        F.bool_and(
            F.when(logical.isin("TIMESTAMP", "DATETIME"), v.isNull() | ~v.rlike(r"\.[0-9]{6}[0-9]*[1-9]"))
        ).alias("micros"),
    )


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
