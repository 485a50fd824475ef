"""The snapshot datasets as Spark schemas: the state each day is applied to, anomalies, DDL history.

The state keeps every value as the canonical text (row images as maps), so applying the next day
never reads back a typed value: the typed per-table Parquet is written from it and never read.
"""

from __future__ import annotations

from pyspark.sql import types as T

TABLE = ("db", "db_schema", "table_name")
_TEXT = T.StringType()
_TEXT_MAP = T.MapType(_TEXT, _TEXT, valueContainsNull=True)

STATE_SCHEMA = T.StructType(
    [
        *(T.StructField(c, _TEXT) for c in TABLE),
        T.StructField("pk_columns", T.ArrayType(_TEXT)),
        T.StructField("key", T.ArrayType(_TEXT)),
        T.StructField("row", _TEXT_MAP),
        T.StructField("column_types", _TEXT_MAP),
        T.StructField("_cdc_op", _TEXT),
        T.StructField("_cdc_event_time", T.TimestampType()),
        T.StructField("_cdc_event_id", _TEXT),
        T.StructField("dt", _TEXT),
    ]
)
STATE_COLUMNS = tuple(f.name for f in STATE_SCHEMA.fields if f.name != "dt")

# kind: update_of_missing_key, delete_of_missing_key, insert_of_existing_key, late_event, cast_failed
ANOMALY_SCHEMA = T.StructType(
    [
        *(T.StructField(c, _TEXT) for c in TABLE),
        T.StructField("kind", _TEXT),
        T.StructField("event_id", _TEXT),
        T.StructField("op", _TEXT),
        T.StructField("detail", _TEXT),
        T.StructField("dt", _TEXT),
    ]
)
ANOMALY_COLUMNS = tuple(f.name for f in ANOMALY_SCHEMA.fields if f.name != "dt")

DDL_COLUMNS = (*TABLE, "event_time", "seq", "event_id", "source_topic", "ddl")
