"""DataWorks 2.0 JSON as OMS writes it (seed 000): schema.source/column/pk and payload.before/after.data.

`eventTime` is 13-digit millis; TIMESTAMP values may use the `13.9` form (millis plus a 9-digit
nanosecond fraction). Ops are case sensitive.

The encoder writes the envelope of the OMS examples (a heartbeat as version + payload only);
TIMESTAMP values go out as OMS epoch `sec.fraction` text.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats import encoding as E
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

OPS = {
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "HEARTBEAT": "HEARTBEAT",
    "TRANSACTION_BEGIN": "TX_BEGIN",
    "TRANSACTION_END": "TX_END",
    "TRUNCATE": "TRUNCATE",
    **dict.fromkeys(DDL_KINDS, "DDL"),
    **dict.fromkeys(["GTID", "XACOMMIT", "XAROLLBACK"], "OTHER"),
}
STAMP_UNIT = "ms"  # payload.timestamp stamps are 13-digit millis
NO_SCN = "null"  # the scn OMS writes when it has none (kept in meta, no position)
SOURCE_META = ("dbType", "dbVersion")
STAMP_META = ("eventTime", "systemTime", "checkpointTime")
EXTEND_PREFIX = "extend."


def _object(value: object) -> dict | None:
    """A sub-object of the message, None when absent; Reject when it is there but no object."""
    if value is None or type(value) is dict:
        return value
    raise Reject(NOT_JSON_OBJECT)


def _list(value: object) -> list | None:
    """An array of the message, None when absent; Reject when it is there but no array."""
    if value is None or type(value) is list:
        return value
    raise Reject(NOT_JSON_OBJECT)


def _data(value: object) -> dict | None:
    """`{"data": {...}}` -> the column map (None when absent)."""
    image = _object(value)
    return None if image is None else _object(image.get("data"))


def _column_pairs(value: object) -> tuple[tuple[str, str | None], ...] | None:
    """The (name, type) pairs of `schema.column` (an entry without a name cannot key a column)."""
    columns = _list(value)
    if columns is None:
        return None
    pairs = []
    for column in columns:
        if type(column) is not dict:
            if column is None:
                continue
            raise Reject(NOT_JSON_OBJECT)
        name, kind = column.get("name"), column.get("type")
        if type(name) is not str:  # names and types are strings but for odd messages: their text then
            name = J.text(name)
            if name is None:
                continue
        pairs.append((name, kind if type(kind) is str else J.text(kind)))
    return tuple(pairs)


@lru_cache(maxsize=4096)
def _types(columns: tuple[tuple[str, str | None], ...]) -> tuple[dict, dict]:
    """(source_types, column_types) of one `schema.column` list, looked up once (callers copy them)."""
    source_types = dict(columns)
    return source_types, {name: C.logical_type(kind) for name, kind in source_types.items()}


def decode_dataworks2(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    try:
        parsed = J.parse_object(message)
    except J.NotJsonObject:
        raise Reject(NOT_JSON_OBJECT) from None
    # the shape first: a part that is not what the format says makes the message no message of it
    schema = _object(parsed.get("schema")) or {}
    payload = _object(parsed.get("payload")) or {}
    source = _object(schema.get("source")) or {}
    columns = _column_pairs(schema.get("column"))
    keys = _list(schema.get("pk"))
    before, after = _data(payload.get("before")), _data(payload.get("after"))
    stamps = _object(payload.get("timestamp")) or {}
    ddl = _object(payload.get("ddl")) or {}
    extend = _object(parsed.get("extend"))

    raw_op = J.text(payload.get("op"))
    op = op_of(raw_op, OPS, "payload.op")
    event_time, unit = C.epoch_time(J.text(stamps.get("eventTime")), STAMP_UNIT)
    if event_time is None and unit is not None:
        raise Reject(BAD_EVENT_TIME)
    sync_time, sync_unit = C.epoch_time(J.text(stamps.get("systemTime")), STAMP_UNIT)
    if sync_time is None and sync_unit is not None:
        raise Reject(BAD_SYNC_TIME)

    scn = J.text(payload.get("scn"))
    meta = {"version": J.text(parsed.get("version"))}
    for key in SOURCE_META:
        meta[key] = J.text(source.get(key))
    for key in STAMP_META:
        meta[key] = J.text(stamps.get(key))
    meta["scn"] = scn
    meta = {k: v for k, v in meta.items() if v is not None}
    if extend:  # the whole `extend` object, every value as text (a null value stays a null value)
        for key, value in extend.items():
            meta[EXTEND_PREFIX + key] = J.text(value)
    source_types = column_types = None
    if columns is not None:
        source_types, column_types = _types(columns)
        source_types, column_types = dict(source_types), dict(column_types)
    is_row = op in C.ROW_OPS
    return [
        {
            "op": op,
            "raw_op": raw_op,
            "db": J.text(source.get("dbName")),
            "db_schema": J.text(source.get("schema")),
            "table_name": J.text(source.get("table")),
            "event_time": event_time,
            "event_time_unit": unit,
            "sync_time": sync_time,
            "position": None if scn == NO_SCN else scn,
            "pk_columns": None if keys is None else [J.text(k) for k in keys],
            "before": before if is_row else None,
            "after": after if is_row else None,
            "column_types": column_types,
            "source_types": source_types,
            "ddl": J.text(ddl.get("text")) if op == "DDL" else None,
            "meta": meta,
        }
    ]


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
        return raw if raw in DDL_KINDS else "QUERY"
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


OMS_DATAWORKS = Codec("oms-dataworks", decode_dataworks2, encode_dataworks2, description="DataWorks 2.0 JSON (OMS)")
