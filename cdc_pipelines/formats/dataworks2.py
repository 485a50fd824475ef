"""DataWorks 2.0 JSON as OMS writes it (seed 000): schema.source/column/pk and payload.before/after.data.

`eventTime` is 13-digit millis; TIMESTAMP values may use the `13.9` form (millis plus a 9-digit
nanosecond fraction). Ops are case sensitive.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats.base import (
    Codec,
    emit,
    first_reason,
    lookup,
    msg,
    prefixed,
    text_map,
    txt,
    typed_map,
    unknown_op_reason,
)

OPS = {
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "HEARTBEAT": "HEARTBEAT",
    "TRANSACTION_BEGIN": "TX_BEGIN",
    "TRANSACTION_END": "TX_END",
    "TRUNCATE": "TRUNCATE",
    **dict.fromkeys(["CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX"], "DDL"),
    **dict.fromkeys(["GTID", "XACOMMIT", "XAROLLBACK"], "OTHER"),
}

_IMAGE = T.StructType([T.StructField("data", J.TEXT_MAP)])
SCHEMA = T.StructType(
    [
        T.StructField("version", T.StringType()),
        T.StructField(
            "schema",
            T.StructType(
                [
                    T.StructField("source", J.TEXT_MAP),
                    T.StructField(
                        "column",
                        T.ArrayType(
                            T.StructType([T.StructField("name", T.StringType()), T.StructField("type", T.StringType())])
                        ),
                    ),
                    T.StructField("pk", T.ArrayType(T.StringType())),
                ]
            ),
        ),
        T.StructField(
            "payload",
            T.StructType(
                [
                    T.StructField("before", _IMAGE),
                    T.StructField("after", _IMAGE),
                    T.StructField("op", T.StringType()),
                    T.StructField("timestamp", J.TEXT_MAP),
                    T.StructField("ddl", T.StructType([T.StructField("text", T.StringType())])),
                    T.StructField("scn", T.StringType()),
                ]
            ),
        ),
        T.StructField("extend", J.TEXT_MAP),
    ]
)


def decode_dataworks2(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    raw_op = txt(msg("payload.op"))
    op = lookup(OPS, raw_op)
    is_row = op.isin(*C.ROW_OPS)
    source = J.image_text(msg("schema.source"))
    stamps = J.image_text(msg("payload.timestamp"))
    columns = msg("schema.column")
    source_types = typed_map(F.transform(columns, lambda c: F.struct(txt(c["name"]), txt(c["type"]))))
    event_time, unit = C.epoch_time(F.element_at(stamps, "eventTime"), "ms")
    sync_time, _ = C.epoch_time(F.element_at(stamps, "systemTime"), "ms")
    meta = F.map_concat(
        text_map(
            ("version", txt(msg("version"))),
            ("dbType", F.element_at(source, "dbType")),
            ("dbVersion", F.element_at(source, "dbVersion")),
            ("eventTime", F.element_at(stamps, "eventTime")),
            ("systemTime", F.element_at(stamps, "systemTime")),
            ("checkpointTime", F.element_at(stamps, "checkpointTime")),
            ("scn", txt(msg("payload.scn"))),
        ),
        F.coalesce(prefixed(msg("extend"), "extend."), F.create_map().cast(J.TEXT_MAP)),
    )
    fields = {
        "op": op,
        "raw_op": raw_op,
        "db": F.element_at(source, "dbName"),
        "db_schema": F.element_at(source, "schema"),
        "table_name": F.element_at(source, "table"),
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "position": F.nullif(txt(msg("payload.scn")), F.lit("null")),
        "pk_columns": msg("schema.pk"),
        "before_raw": F.when(is_row, msg("payload.before.data")),
        "after_raw": F.when(is_row, msg("payload.after.data")),
        "column_types": F.transform_values(source_types, lambda _k, v: C.logical_type(v)),
        "source_types": source_types,
        "ddl": F.when(op == "DDL", txt(msg("payload.ddl.text"))),
        "meta": meta,
    }
    reason = first_reason(
        (raw_op.isNull(), "missing payload.op"),
        (op.isNull(), unknown_op_reason("payload.op", raw_op)),
    )
    return emit(df, fields, reason)


OMS_DATAWORKS = Codec("oms-dataworks", SCHEMA, decode_dataworks2, description="DataWorks 2.0 JSON (OMS)")
