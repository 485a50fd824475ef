"""The canonical change table and the rejects dataset as Spark schemas (the vocabulary is in `canonical`)."""

from __future__ import annotations

from pyspark.sql import types as T

_TEXT = T.StringType()
_TEXT_MAP = T.MapType(_TEXT, _TEXT, valueContainsNull=True)

CANONICAL_SCHEMA = T.StructType(
    [
        T.StructField("event_id", _TEXT, False),
        T.StructField("source_format", _TEXT, False),
        T.StructField("source_topic", _TEXT, False),
        T.StructField("source_file", _TEXT, False),
        T.StructField("source_line", T.LongType(), False),
        T.StructField("op", _TEXT, False),
        T.StructField("raw_op", _TEXT),
        T.StructField("db", _TEXT),
        T.StructField("db_schema", _TEXT),
        T.StructField("table_name", _TEXT),
        T.StructField("event_time", T.TimestampType()),
        T.StructField("event_time_unit", _TEXT),
        T.StructField("sync_time", T.TimestampType()),
        T.StructField("tx_id", _TEXT),
        T.StructField("seq", _TEXT),
        T.StructField("position", _TEXT),
        T.StructField("pk_columns", T.ArrayType(_TEXT)),
        T.StructField("before", _TEXT_MAP),
        T.StructField("after", _TEXT_MAP),
        T.StructField("column_types", _TEXT_MAP),
        T.StructField("source_types", _TEXT_MAP),
        T.StructField("ddl", _TEXT),
        T.StructField("meta", _TEXT_MAP),
        T.StructField("dt", _TEXT, False),
    ]
)
CANONICAL_COLUMNS = tuple(f.name for f in CANONICAL_SCHEMA.fields)

REJECTS_SCHEMA = T.StructType(
    [
        T.StructField("source_format", _TEXT, False),
        T.StructField("source_topic", _TEXT, False),
        T.StructField("source_file", _TEXT, False),
        T.StructField("source_line", T.LongType(), False),
        T.StructField("raw", _TEXT),
        T.StructField("raw_encoding", _TEXT, False),
        T.StructField("reason", _TEXT, False),
        T.StructField("dt", _TEXT, False),
    ]
)
