"""DataWorks 2.0 JSON as OMS writes it (seed 000): schema.source/column/pk and payload.before/after.data.

`eventTime` is 13-digit millis; TIMESTAMP values may use the `13.9` form (millis plus a 9-digit
nanosecond fraction). Ops are case sensitive.

The encoder writes the envelope of the OMS examples (a heartbeat as version + payload only);
TIMESTAMP values go out as OMS epoch `sec.fraction` text.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats import encoding as E
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


DDL_OPS = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX")
OTHER_OPS = ("GTID", "XACOMMIT", "XAROLLBACK")
OP_NAMES = {
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "HEARTBEAT": "HEARTBEAT",
    "TRUNCATE": "TRUNCATE",
    "TX_BEGIN": "TRANSACTION_BEGIN",
    "TX_END": "TRANSACTION_END",
}
# schema.column type names as the OMS examples write them; each maps back to the same logical type
LOGICAL_TO_DATAWORKS = {
    "BOOLEAN": "BOOLEAN", "INT": "BIGINT", "DECIMAL": "DECIMAL", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE",
    "STRING": "VARCHAR", "BYTES": "BLOB", "DATE": "DATE", "TIME": "TIME", "DATETIME": "DATETIME",
    "TIMESTAMP": "TIMESTAMP", "ZONED_DATETIME": "ZONED_DATETIME", "INTERVAL": "INTERVAL_DAY_TO_SECOND", "JSON": "JSON",
}  # fmt: skip
STAMPS = ("eventTime", "systemTime", "checkpointTime")


def _payload_op(event: dict, same: bool) -> str:
    op, raw = event["op"], event.get("raw_op")
    if same and OPS.get(raw) == op:
        return raw
    if op == "DDL":  # the DDL kind is not in the canonical row: keep a name the source gave, else QUERY
        return raw if raw in DDL_OPS else "QUERY"
    if op == "OTHER" and raw in OTHER_OPS:
        return raw
    if op in OP_NAMES:
        return OP_NAMES[op]
    why = " (an UPSERT is neither an INSERT nor an UPDATE)" if op == "UPSERT" else ""
    raise E.Unsupported(f"DataWorks 2.0 has no {op} op{why}")


def _columns(event: dict, same: bool) -> list | None:
    if same:
        types = event.get("source_types") or {}
    else:
        logical = event.get("column_types") or {}
        types = {k: LOGICAL_TO_DATAWORKS[t] for k, t in logical.items() if t in LOGICAL_TO_DATAWORKS}
    return [{"name": k, "type": t} for k, t in types.items()] or None


def _image(event: dict, image: dict | None) -> dict | None:
    """`{"data": ...}` with numbers where the source had them and TIMESTAMP as OMS `sec.fraction` text."""
    if image is None:
        return None
    return {"data": E.image_json(event, E.timestamps_as_epoch(image, event.get("column_types") or {}))}


def encode_dataworks2(event: dict, options: Mapping[str, str]) -> list:
    same = E.from_same_family(event, "oms-dataworks")
    op = event["op"]
    payload_op = _payload_op(event, same)
    E.require_table(event)
    if op == "UPDATE" and event.get("before") is None:
        raise E.Unsupported("UPDATE without a before image: DataWorks 2.0 needs payload.before")
    meta = event.get("meta") or {}
    if same:
        stamps = {k: E.number(meta[k]) for k in STAMPS if meta.get(k) is not None}
    else:
        millis = {
            "eventTime": E.epoch_millis(event.get("event_time")),
            "systemTime": E.epoch_millis(event.get("sync_time")),
        }
        stamps = {k: v for k, v in millis.items() if v is not None}
    version = meta.get("version", "2.0") if same else "2.0"
    if op == "HEARTBEAT":  # the heartbeat message of the seed: version, timestamp and op only
        return [E.dumps({"version": version, "payload": {"timestamp": stamps, "op": payload_op}})]
    source = {
        "dbType": meta.get("dbType") if same else None,
        "dbVersion": meta.get("dbVersion") if same else None,
        "dbName": event.get("db"),
        "schema": event.get("db_schema"),
        "table": event.get("table_name"),
    }
    ddl = event.get("ddl")
    message = {
        "version": version,
        "schema": {"source": source, "column": _columns(event, same), "pk": event.get("pk_columns")},
        "payload": {
            "before": _image(event, event.get("before")),
            "after": _image(event, event.get("after")),
            "op": payload_op,
            "timestamp": stamps,
            "ddl": {"text": ddl} if op == "DDL" else None,
            "scn": meta.get("scn") if same else (event.get("position") or "null"),
        },
        "extend": E.meta_of(event, "extend.") if same else {},
    }
    return [E.dumps(message)]


OMS_DATAWORKS = Codec(
    "oms-dataworks", SCHEMA, decode_dataworks2, encode=encode_dataworks2, description="DataWorks 2.0 JSON (OMS)"
)
