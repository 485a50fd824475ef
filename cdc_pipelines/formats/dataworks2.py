"""DataWorks 2.0 JSON as OMS writes it (seed 000): schema.source/column/pk and payload.before/after.data.

`eventTime` is 13-digit millis; TIMESTAMP values may use the `13.9` form (millis plus a 9-digit
nanosecond fraction). Ops are case sensitive.

The encoder writes the envelope of the OMS examples (a heartbeat as version + payload only);
TIMESTAMP values go out as OMS epoch `sec.fraction` text.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import msgspec

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import (
    BAD_EVENT_TIME,
    BAD_SYNC_TIME,
    DDL_KINDS,
    NOT_JSON_OBJECT,
    Codec,
    RawEvent,
    Reject,
    op_of,
)
from cdc_pipelines.model import canonical as C

OTHER_OPS = ("GTID", "XACOMMIT", "XAROLLBACK")
_CANONICAL_NAMES = ("INSERT", "UPDATE", "DELETE", "HEARTBEAT", "TRUNCATE")  # ops named as the canonical ones
OPS = {op: op for op in _CANONICAL_NAMES} | {"TRANSACTION_BEGIN": "TX_BEGIN", "TRANSACTION_END": "TX_END"}
OPS |= dict.fromkeys(DDL_KINDS, "DDL") | dict.fromkeys(OTHER_OPS, "OTHER")
STAMP_UNIT = "ms"  # payload.timestamp stamps are 13-digit millis


class _Image(msgspec.Struct, gc=False):
    """`{"data": {...}}`: an image's column map (null or absent: no image)."""

    data: dict[str, Any] | None = None


class Stamps(msgspec.Struct, gc=False):
    """`payload.timestamp` (DataWorks 2.0 and DataWorks Kafka JSON)."""

    eventTime: Any = None  # noqa: N815 - DataWorks' field names
    systemTime: Any = None  # noqa: N815
    checkpointTime: Any = None  # noqa: N815


class Ddl(msgspec.Struct, gc=False):
    text: Any = None


class Payload(msgspec.Struct, gc=False):
    before: _Image | None = None
    after: _Image | None = None
    op: Any = None
    timestamp: Stamps | None = None
    ddl: Ddl | None = None
    scn: Any = None


class DataWorks2Message(msgspec.Struct, gc=False):
    """A DataWorks 2.0 message's envelope; `schema` repeats per table: raw JSON, read once per text."""

    version: Any = None
    schema: msgspec.Raw = None
    payload: Payload | None = None
    extend: dict[str, Any] | None = None


_PARSE = J.struct_parser(DataWorks2Message)
_NO_PAYLOAD = Payload()
_NO_STAMPS = Stamps()
_NO_DDL = Ddl()


def schema_parts(raw: bytes, columns: str, keys: str) -> tuple:
    """(column pairs, key list, source object) of a message's `schema` JSON (None, None, {} for null), the
    columns and keys under the names the format gives them; NotJsonObject where its parts are not the
    objects and arrays DataWorks writes."""
    schema = {} if raw == b"null" else J.parse_object(raw)
    source, key_list = schema.get("source"), schema.get(keys)
    if (source is not None and type(source) is not dict) or (key_list is not None and type(key_list) is not list):
        raise Reject(NOT_JSON_OBJECT)
    return J.column_pairs(schema.get(columns)), key_list, source or {}


@lru_cache(maxsize=1024)
def _schema(raw: bytes) -> tuple:
    """(source_types, column_types, pk, source) of a message's `schema` JSON. The same text repeats for every
    message of a table, so it is read once: what it gives is shared by those messages, nothing changes it."""
    columns, keys, source = schema_parts(raw, "column", "pk")
    if columns is None:
        return None, None, keys, source
    return dict(columns), {name: C.logical_type(kind) for name, kind in columns}, keys, source


def decode_dataworks2(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    # the shape first (the parser and the schema reading check it): a part that is not what the
    # format says makes the message no message of it
    msg = _PARSE(message)
    raw_schema = msg.schema
    source_types, column_types, keys, source = _schema(b"null" if raw_schema is None else bytes(raw_schema))
    payload = msg.payload or _NO_PAYLOAD
    before, after = payload.before, payload.after
    stamps = payload.timestamp or _NO_STAMPS
    text = J.text

    raw_op = text(payload.op)
    op = op_of(raw_op, OPS, "payload.op")
    event_time, unit = C.epoch_time(text(stamps.eventTime), STAMP_UNIT)
    if event_time is None and unit is not None:
        raise Reject(BAD_EVENT_TIME)
    sync_time, sync_unit = C.epoch_time(text(stamps.systemTime), STAMP_UNIT)
    if sync_time is None and sync_unit is not None:
        raise Reject(BAD_SYNC_TIME)

    scn = text(payload.scn)
    meta = {
        "version": text(msg.version),
        "dbType": text(source.get("dbType")),
        "dbVersion": text(source.get("dbVersion")),
        "eventTime": text(stamps.eventTime),
        "systemTime": text(stamps.systemTime),
        "checkpointTime": text(stamps.checkpointTime),
        "scn": scn,
    }
    meta = {k: v for k, v in meta.items() if v is not None}
    if msg.extend:  # the whole `extend` object, every value as text (a null value stays a null value)
        for key, value in msg.extend.items():
            meta["extend." + key] = text(value)
    is_row = op in C.ROW_OPS
    return [
        {
            "op": op,
            "raw_op": raw_op,
            "db": text(source.get("dbName")),
            "db_schema": text(source.get("schema")),
            "table_name": text(source.get("table")),
            "event_time": event_time,
            "event_time_unit": unit,
            "sync_time": sync_time,
            "position": None if scn == "null" else scn,  # OMS writes "null" when it has none (kept in meta)
            "pk_columns": None if keys is None else [text(k) for k in keys],
            "before": before.data if is_row and before is not None else None,
            "after": after.data if is_row and after is not None else None,
            "column_types": column_types,
            "source_types": source_types,
            "ddl": text((payload.ddl or _NO_DDL).text) if op == "DDL" else None,
            "meta": meta,
        }
    ]


# the op name of each canonical op but DDL and OTHER (whose names are the source's)
OP_NAMES = {op: name for name, op in OPS.items() if op not in ("DDL", "OTHER")}
STAMPS = ("eventTime", "systemTime", "checkpointTime")


def _payload_op(event: dict, same: bool) -> str:
    op, raw = event["op"], event.get("raw_op")
    if (same and OPS.get(raw) == op) or (op == "OTHER" and raw in OTHER_OPS):
        return raw
    if op == "DDL":  # the DDL kind is not in the canonical row: keep a name the source gave, else QUERY
        return raw if raw in DDL_KINDS else "QUERY"
    if op in OP_NAMES:
        return OP_NAMES[op]
    why = " (an UPSERT is neither an INSERT nor an UPDATE)" if op == "UPSERT" else ""
    raise E.Unsupported(f"DataWorks 2.0 has no {op} op{why}")


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
        stamps = {
            k: E.epoch_millis(event.get(f)) for k, f in (("eventTime", "event_time"), ("systemTime", "sync_time"))
        }
        stamps = {k: v for k, v in stamps.items() if v is not None}
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
    ddl, types = event.get("ddl"), event.get("column_types") or {}
    # the column types a DataWorks 2.0 source named, else the OMS names of the logical types
    if same:
        named = event.get("source_types") or {}
    else:
        named = {k: E.LOGICAL_TO_OMS[t] for k, t in types.items() if t in E.LOGICAL_TO_OMS}
    # `{"data": ...}` with numbers where the source had them and TIMESTAMP as OMS `sec.fraction` text
    before, after = (
        None if image is None else {"data": E.image_json(event, E.timestamps_as_epoch(image, types))}
        for image in (event.get("before"), event.get("after"))
    )
    message = {
        "version": version,
        "schema": {
            "source": source,
            "column": [{"name": k, "type": t} for k, t in named.items()] or None,
            "pk": event.get("pk_columns"),
        },
        "payload": {
            "before": before,
            "after": after,
            "op": payload_op,
            "timestamp": stamps,
            "ddl": {"text": ddl} if op == "DDL" else None,
            "scn": meta.get("scn") if same else (event.get("position") or "null"),
        },
        "extend": E.meta_of(event, "extend.") if same else {},
    }
    return [E.dumps(message)]


def recognise_dataworks2(message: dict) -> bool:
    """A `payload` object with version 2.0 or a `schema.column`; DataWorks Kafka JSON shares the
    envelope, so it is tried first."""
    schema = message.get("schema")
    return isinstance(message.get("payload"), dict) and (
        message.get("version") == "2.0" or isinstance(schema, dict) and "column" in schema
    )


OMS_DATAWORKS = Codec(
    "oms-dataworks",
    decode_dataworks2,
    encode_dataworks2,
    event_time_unit="ms",
    description="DataWorks 2.0 JSON (OMS)",
    recognise=recognise_dataworks2,
)
