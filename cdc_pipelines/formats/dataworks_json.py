"""DataWorks Kafka JSON (seed 002) and the DataHub BLOB payload (seed 004), versions 0.0.1 and 1.0.0.

`schema.dataColumn` types are DataWorks' six: BOOLEAN, DOUBLE, DATE (a 13-digit epoch-millis
instant, so canonical TIMESTAMP), BYTES (base64), LONG, STRING. An update comes either split
(UPDATE_BEFOR then UPDATE_AFTER sharing `sequenceId`, paired in `split_update`) or merged (one
UPDATE_AFTER with both images). `ddl.ddlMeta` is a Java-serialized object: kept as opaque text in
`meta`, never deserialized.
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
    text_map,
    txt,
    typed_map,
    unknown_op_reason,
)

SPLIT_BEFORE, SPLIT_AFTER = "UPDATE_BEFOR", "UPDATE_AFTER"
OPS = {
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    SPLIT_BEFORE: "UPDATE",
    SPLIT_AFTER: "UPDATE",
    "DELETE": "DELETE",
    "MHEARTBEAT": "HEARTBEAT",
    "HEARTBEAT": "HEARTBEAT",
    "TRANSACTION_BEGIN": "TX_BEGIN",
    "TRANSACTION_END": "TX_END",
    "TRUNCATE": "TRUNCATE",
    **dict.fromkeys(["CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX"], "DDL"),
    **dict.fromkeys(["GTID", "XACOMMIT", "XAROLLBACK"], "OTHER"),
}
COLUMN_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "DOUBLE": "DOUBLE",
    "DATE": "TIMESTAMP",
    "BYTES": "BYTES",
    "LONG": "INT",
    "STRING": "STRING",
}

_IMAGE = T.StructType([T.StructField("dataColumn", J.TEXT_MAP)])
SCHEMA = T.StructType(
    [
        T.StructField("version", T.StringType()),
        T.StructField(
            "schema",
            T.StructType(
                [
                    T.StructField(
                        "dataColumn",
                        T.ArrayType(
                            T.StructType([T.StructField("name", T.StringType()), T.StructField("type", T.StringType())])
                        ),
                    ),
                    T.StructField("primaryKey", T.ArrayType(T.StringType())),
                    T.StructField("source", J.TEXT_MAP),
                ]
            ),
        ),
        T.StructField(
            "payload",
            T.StructType(
                [
                    T.StructField("before", _IMAGE),
                    T.StructField("after", _IMAGE),
                    T.StructField("sequenceId", T.StringType()),
                    T.StructField("scn", T.StringType()),
                    T.StructField("op", T.StringType()),
                    T.StructField("timestamp", J.TEXT_MAP),
                    T.StructField(
                        "ddl",
                        T.StructType([T.StructField("text", T.StringType()), T.StructField("ddlMeta", T.StringType())]),
                    ),
                ]
            ),
        ),
    ]
)


def decode_dataworks_json(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    raw_op = txt(msg("payload.op"))
    op = lookup(OPS, raw_op)
    is_row = op.isin(*C.ROW_OPS)
    source = J.image_text(msg("schema.source"))
    stamps = J.image_text(msg("payload.timestamp"))
    sequence = txt(msg("payload.sequenceId"))
    before, after = msg("payload.before.dataColumn"), msg("payload.after.dataColumn")
    source_types = typed_map(F.transform(msg("schema.dataColumn"), lambda c: F.struct(txt(c["name"]), txt(c["type"]))))
    # DataWorks stamps are 13-digit millis; -1 marks "unknown" (full-load rows) and stays in meta only
    event_time, unit = C.epoch_time(F.nullif(F.element_at(stamps, "eventTime"), F.lit("-1")), "ms")
    sync_time, _ = C.epoch_time(F.nullif(F.element_at(stamps, "systemTime"), F.lit("-1")), "ms")
    table = F.element_at(source, "tableName")
    # a split half has one image; a merged UPDATE_AFTER carries both and needs no partner
    is_half = ((raw_op == SPLIT_BEFORE) & after.isNull()) | ((raw_op == SPLIT_AFTER) & before.isNull())
    fields = {
        "op": op,
        "raw_op": raw_op,
        "db": F.element_at(source, "dbName"),
        "db_schema": F.element_at(source, "schemaName"),
        "table_name": table,
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "seq": sequence,
        "position": txt(msg("payload.scn")),
        "pk_columns": msg("schema.primaryKey"),
        "before_raw": F.when(is_row, before),
        "after_raw": F.when(is_row, after),
        "column_types": F.transform_values(
            source_types, lambda _k, v: F.coalesce(lookup(COLUMN_TYPES, F.upper(v)), C.logical_type(v))
        ),
        "source_types": source_types,
        "ddl": F.when(op == "DDL", txt(msg("payload.ddl.text"))),
        "meta": text_map(
            ("version", txt(msg("version"))),
            ("dbType", F.element_at(source, "dbType")),
            ("dbVersion", F.element_at(source, "dbVersion")),
            ("eventTime", F.element_at(stamps, "eventTime")),
            ("systemTime", F.element_at(stamps, "systemTime")),
            ("checkpointTime", F.element_at(stamps, "checkpointTime")),
            ("sequenceId", sequence),
            ("scn", txt(msg("payload.scn"))),
            ("ddlMeta", txt(msg("payload.ddl.ddlMeta"))),
        ),
    }
    reason = first_reason(
        (raw_op.isNull(), "missing payload.op"),
        (op.isNull(), unknown_op_reason("payload.op", raw_op)),
        (is_half & sequence.isNull(), F.concat(raw_op, F.lit(" without payload.sequenceId to pair it"))),
    )
    key = F.when(is_half, F.concat_ws("\u0001", F.element_at(source, "dbName"), table, sequence))
    return emit(df, fields, reason, pair_key=key)


DATAWORKS_JSON = Codec(
    "dataworks-json",
    SCHEMA,
    decode_dataworks_json,
    update_has_before=False,
    split_update=True,
    description="DataWorks Kafka JSON / DataHub BLOB payload",
)
