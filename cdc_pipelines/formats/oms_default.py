"""OMS Default and DefaultExtendColumnType (seed 000): prevStruct / postStruct / allMetaData.

DefaultExtendColumnType is Default plus a `__light_type` entry in each image naming every column's
type, so both are one decoder with a flag. PK names and values are `\\u0001`-joined in allMetaData;
`timestamp` is epoch seconds; recordType `ROW` is a full-load row.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats.base import Codec, emit, first_reason, lookup, msg, txt, unknown_op_reason

OPS = {
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "DDL": "DDL",
    "HEARTBEAT": "HEARTBEAT",
    "ROW": "INSERT",
}
LIGHT_TYPE = "__light_type"
PK_SEPARATOR = "\u0001"

SCHEMA = T.StructType(
    [
        T.StructField("allMetaData", J.TEXT_MAP),
        T.StructField("prevStruct", J.TEXT_MAP),
        T.StructField("postStruct", J.TEXT_MAP),
        T.StructField("recordType", T.StringType()),
    ]
)
_LIGHT_TYPES = T.MapType(T.StringType(), T.StructType([T.StructField("schemaType", T.StringType())]))


def _row(image):
    return F.map_filter(image, lambda k, _v: k != LIGHT_TYPE)


def _light_types(image):
    parsed = J.parse_nested(F.element_at(image, LIGHT_TYPE), _LIGHT_TYPES)
    return F.transform_values(parsed, lambda _k, v: txt(v["schemaType"]))


def _decode(extended: bool):
    def decode(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
        md = J.image_text(msg("allMetaData"))
        raw_op = txt(msg("recordType"))
        op = lookup(OPS, raw_op)
        is_row = op.isin(*C.ROW_OPS)
        post, prev = msg("postStruct"), msg("prevStruct")
        pk_names = F.element_at(md, "record_primary_key")
        time, unit = C.time_of(F.element_at(md, "timestamp"))
        fields = {
            "op": op,
            "raw_op": raw_op,
            "db": F.element_at(md, "db"),
            "table_name": F.element_at(md, "table_name"),
            "event_time": time,
            "event_time_unit": unit,
            "tx_id": F.element_at(md, "transId"),
            "seq": F.element_at(md, "storeDataSequence"),
            "position": F.element_at(md, "checkpoint"),
            "pk_columns": F.when(pk_names.isNotNull() & (pk_names != ""), F.split(pk_names, PK_SEPARATOR)),
            "before_raw": F.when(is_row, _row(prev)),
            "after_raw": F.when(is_row, _row(post)),
            "ddl": F.when(op == "DDL", txt(F.element_at(post, "ddl"))),
            "meta": md,
        }
        if extended:
            source_types = F.map_concat(
                F.coalesce(_light_types(prev), F.create_map().cast(J.TEXT_MAP)),
                F.coalesce(_light_types(post), F.create_map().cast(J.TEXT_MAP)),
            )
            fields["source_types"] = F.when(F.size(source_types) > 0, source_types)
            fields["column_types"] = F.transform_values(fields["source_types"], lambda _k, v: C.logical_type(v))
        reason = first_reason(
            (raw_op.isNull(), "missing recordType"),
            (op.isNull(), unknown_op_reason("recordType", raw_op)),
            (is_row & F.element_at(md, "table_name").isNull(), "row change without allMetaData.table_name"),
        )
        return emit(df, fields, reason)

    return decode


RECORD_TYPES = {"INSERT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE", "DDL": "DDL", "HEARTBEAT": "HEARTBEAT"}
LOGICAL_TO_LIGHT_TYPE = {
    "BOOLEAN": "BOOL", "INT": "BIGINT", "DECIMAL": "DECIMAL", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE",
    "STRING": "VARCHAR", "BYTES": "BLOB", "DATE": "DATE", "TIME": "TIME", "DATETIME": "DATETIME",
    "TIMESTAMP": "TIMESTAMP", "ZONED_DATETIME": "ZONED_DATETIME", "INTERVAL": "INTERVAL_DAY_TO_SECOND", "JSON": "JSON",
}  # fmt: skip


def _encode(extended: bool):
    def encode(event: dict, options) -> list:
        same = E.from_same_family(event, "oms-default", "oms-default-extend")
        if event["op"] not in RECORD_TYPES:
            raise E.Unsupported(f"OMS Default has no {event['op']} record")
        E.require_table(event)
        record_type = event["raw_op"] if same and event["raw_op"] in OPS else RECORD_TYPES[event["op"]]
        types = event.get("column_types") or {}
        meta = E.meta_of(event) if same else {}
        pk = event.get("pk_columns")
        values = E.pk_values(event)
        meta |= {"db": event.get("db"), "table_name": event.get("table_name")}
        if not same:
            meta["record_primary_key"] = PK_SEPARATOR.join(pk) if pk else None
            meta["record_primary_value"] = PK_SEPARATOR.join(v or "" for v in values) if values else None
            seconds = E.epoch_seconds(event.get("event_time"))
            meta |= {"timestamp": None if seconds is None else str(seconds), "transId": event.get("tx_id"),
                     "storeDataSequence": event.get("seq"), "checkpoint": event.get("position")}  # fmt: skip
        before = E.image_json(event, E.timestamps_as_epoch(event.get("before"), types))
        after = E.image_json(event, E.timestamps_as_epoch(event.get("after"), types))
        if event["op"] == "DDL":
            after = {"ddl": event["ddl"]}
        if extended:
            light = dict(event.get("source_types") or {}) if same else {}
            light |= {
                k: LOGICAL_TO_LIGHT_TYPE[t] for k, t in types.items() if t in LOGICAL_TO_LIGHT_TYPE and k not in light
            }
            for image in (before, after):
                if image is not None and light:
                    image[LIGHT_TYPE] = {k: {"schemaType": t} for k, t in light.items()}
        message = {"allMetaData": meta, "prevStruct": before, "postStruct": after, "recordType": record_type}
        if meta.get("storeDataSequence") is not None:
            meta["storeDataSequence"] = E.number(meta["storeDataSequence"])
        return [E.dumps(message)]

    return encode


OMS_DEFAULT = Codec("oms-default", SCHEMA, _decode(False), encode=_encode(False), description="OMS Default JSON")
OMS_DEFAULT_EXTEND = Codec(
    "oms-default-extend",
    SCHEMA,
    _decode(True),
    encode=_encode(True),
    description="OMS DefaultExtendColumnType JSON (__light_type)",
)
