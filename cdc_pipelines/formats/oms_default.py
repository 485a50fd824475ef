"""OMS Default and DefaultExtendColumnType (seed 000): prevStruct / postStruct / allMetaData.

DefaultExtendColumnType is Default plus a `__light_type` entry in each image naming every column's
type, so both are one decoder with a flag. PK names and values are `\\u0001`-joined in allMetaData;
`timestamp` is epoch seconds; recordType `ROW` is a full-load row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any

import msgspec

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import Codec, RawEvent, Reject, op_of
from cdc_pipelines.model import canonical as C
from cdc_pipelines.schema_changes.dialects import source_name

RECORD_TYPES = ("INSERT", "UPDATE", "DELETE", "DDL", "HEARTBEAT")  # each the canonical op of its name
OPS = {**{op: op for op in RECORD_TYPES}, "ROW": "INSERT"}
LIGHT_TYPE = "__light_type"
PK_SEPARATOR = "\u0001"
_OBJECT = dict[str, Any] | None


class OmsDefaultMessage(msgspec.Struct, gc=False):
    """An OMS Default message's envelope: allMetaData and both images are objects or null."""

    allMetaData: _OBJECT = None  # noqa: N815 - OMS's field names
    prevStruct: _OBJECT = None  # noqa: N815
    postStruct: _OBJECT = None  # noqa: N815
    recordType: Any = None  # noqa: N815


_PARSE = J.struct_parser(OmsDefaultMessage)


def _light_types(light: object) -> dict | None:
    """`{column: {"schemaType": type}}` -> `{column: type}`; None where it is no such object.

    The entry may also be that object as JSON text. A column whose entry is null, or has no
    `schemaType`, has a null type.
    """
    if type(light) is str:
        try:
            light = J.parse_object(light)
        except J.NotJsonObject:
            return None
    if type(light) is not dict or any(entry is not None and type(entry) is not dict for entry in light.values()):
        return None
    return {column: None if entry is None else J.text(entry.get("schemaType")) for column, entry in light.items()}


@lru_cache(maxsize=4096)
def _logical_types(source_types: tuple[tuple[str, str | None], ...]) -> dict[str, str | None]:
    """Logical type of every `__light_type` column, looked up once per column set (shared: never changed)."""
    return {name: C.logical_type(kind) for name, kind in source_types}


def _decoder(message: bytes, options: Mapping[str, str], extended: bool) -> list[RawEvent]:
    # the shape first (the parser checks it): a part that is not what the format says makes the
    # message no message of it
    msg = _PARSE(message)
    raw_op = J.text(msg.recordType)
    op = op_of(raw_op, OPS, "recordType")
    # allMetaData is kept whole as meta, every value as text
    meta = msg.allMetaData
    fields = J.texts(meta) if meta else {}
    is_row = op in C.ROW_OPS
    if is_row and fields.get("table_name") is None:
        raise Reject("row change without allMetaData.table_name")
    prev, post = msg.prevStruct, msg.postStruct
    # `__light_type` is never a column: out of both images, whichever variant reads them
    prev_light = prev.pop(LIGHT_TYPE, None) if prev else None
    post_light = post.pop(LIGHT_TYPE, None) if post else None
    pk_names = fields.get("record_primary_key")
    event_time, unit = C.time_of(fields.get("timestamp"))
    event = {
        "op": op,
        "raw_op": raw_op,
        "db": fields.get("db"),
        "table_name": fields.get("table_name"),
        "event_time": event_time,
        "event_time_unit": unit,
        "tx_id": fields.get("transId"),
        "seq": fields.get("storeDataSequence"),
        "position": fields.get("checkpoint"),
        "pk_columns": pk_names.split(PK_SEPARATOR) if pk_names else None,
        "before": prev if is_row else None,
        "after": post if is_row else None,
        "ddl": J.text(post.get("ddl")) if op == "DDL" and post is not None else None,
        "meta": meta,
    }
    if extended:
        # both images' types, the after image's winning where they differ
        source_types = {**(_light_types(prev_light) or {}), **(_light_types(post_light) or {})}
        if source_types:
            event["source_types"] = source_types
            event["column_types"] = _logical_types(tuple(source_types.items()))
    return [event]


LOGICAL_TO_LIGHT_TYPE = {**E.LOGICAL_TO_OMS, "BOOLEAN": "BOOL"}


def _encode(event: dict, options, extended: bool) -> list:
    same = E.from_same_family(event, "oms-default", "oms-default-extend")
    if event["op"] not in RECORD_TYPES:
        raise E.Unsupported(f"OMS Default has no {event['op']} record")
    E.require_table(event)
    record_type = event["raw_op"] if same and event["raw_op"] in OPS else event["op"]
    types = event.get("column_types") or {}
    meta = E.meta_of(event) if same else {}
    meta |= {"db": event.get("db"), "table_name": event.get("table_name")}
    if not same:
        pk, values = event.get("pk_columns"), E.pk_values(event)
        meta["record_primary_key"] = PK_SEPARATOR.join(pk) if pk else None
        meta["record_primary_value"] = PK_SEPARATOR.join(v or "" for v in values) if values else None
        seconds = E.epoch_seconds(event.get("event_time"))
        meta |= {"timestamp": None if seconds is None else str(seconds), "transId": event.get("tx_id"),
                 "storeDataSequence": event.get("seq"), "checkpoint": event.get("position")}  # fmt: skip
        source = source_name(E.meta_of(event))  # the DDL's dialect, as OMS names its source (OB_ORACLE, ...)
        if source is not None:
            meta["dbType"] = source.upper()
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
    if meta.get("storeDataSequence") is not None:
        meta["storeDataSequence"] = E.number(meta["storeDataSequence"])
    return [E.dumps({"allMetaData": meta, "prevStruct": before, "postStruct": after, "recordType": record_type})]


def recognise_oms_default(message: dict, extended: bool) -> bool:
    """The OMS Default envelope, with (`extended`) or without `__light_type` in an image: the one thing that
    tells the extended variant from the plain one."""
    if "recordType" not in message or not any(k in message for k in ("allMetaData", "postStruct", "prevStruct")):
        return False
    images = (message.get("postStruct"), message.get("prevStruct"))
    return any(isinstance(i, dict) and "__light_type" in i for i in images) == extended


OMS_DEFAULT = Codec(
    "oms-default",
    partial(_decoder, extended=False),
    partial(_encode, extended=False),
    event_time_unit="s",
    record_primary_value=True,
    description="OMS Default JSON",
    recognise=partial(recognise_oms_default, extended=False),
)
OMS_DEFAULT_EXTEND = replace(
    OMS_DEFAULT, format_id="oms-default-extend", decode=partial(_decoder, extended=True),
    encode=partial(_encode, extended=True), description="OMS DefaultExtendColumnType JSON (__light_type)",
    recognise=partial(recognise_oms_default, extended=True),
)  # fmt: skip
