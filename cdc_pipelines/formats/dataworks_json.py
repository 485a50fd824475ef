"""DataWorks Kafka JSON (seed 002) and the DataHub BLOB payload (seed 004), versions 0.0.1 and 1.0.0.

`schema.dataColumn` types are DataWorks' six: BOOLEAN, DOUBLE, DATE (a 13-digit epoch-millis
instant, so canonical TIMESTAMP), BYTES (base64), LONG, STRING. An update comes either split
(UPDATE_BEFOR then UPDATE_AFTER sharing `sequenceId`: halves with a `pair_key`, paired by
`messages.pair_halves`) or merged (one UPDATE_AFTER with both images). `ddl.ddlMeta` is a
Java-serialized object: kept as opaque text in `meta`, never deserialized.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import msgspec

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import (
    BAD_EVENT_TIME,
    BAD_SYNC_TIME,
    LONGS,
    NOT_JSON_OBJECT,
    Codec,
    Option,
    RawEvent,
    Reject,
    op_of,
)
from cdc_pipelines.formats.dataworks2 import OP_NAMES, Ddl, Payload, Stamps, schema_parts
from cdc_pipelines.formats.dataworks2 import OPS as DATAWORKS2_OPS
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

SPLIT_BEFORE, SPLIT_AFTER = "UPDATE_BEFOR", "UPDATE_AFTER"
# DataWorks 2.0's ops plus the Kafka JSON ones: split update halves and the task heartbeat
OPS = {**DATAWORKS2_OPS, SPLIT_BEFORE: "UPDATE", SPLIT_AFTER: "UPDATE", "MHEARTBEAT": "HEARTBEAT"}
# DataWorks' six column types -> logical type: four are named as theirs
COLUMN_TYPES = {t: t for t in ("BOOLEAN", "DOUBLE", "BYTES", "STRING")} | {"DATE": "TIMESTAMP", "LONG": "INT"}
# a DATE is epoch millis at any date: its digit count does not tell its unit before 1973
DATE_UNIT = "ms"
STAMP_UNIT = "ms"  # DataWorks stamps are 13-digit millis; -1 marks "unknown" (full-load rows)


class _Image(msgspec.Struct, gc=False):
    """`{"dataColumn": {...}}`: an image's column map (null or absent: no image)."""

    dataColumn: dict[str, Any] | None = None  # noqa: N815 - DataWorks' field names


class _Ddl(Ddl, gc=False):
    ddlMeta: Any = None  # noqa: N815


class _Payload(Payload, gc=False):
    """DataWorks 2.0's payload, its images' columns under `dataColumn`, with a `sequenceId`."""

    before: _Image | None = None
    after: _Image | None = None
    sequenceId: Any = None  # noqa: N815
    ddl: _Ddl | None = None


class DataWorksMessage(msgspec.Struct, gc=False):
    """A DataWorks message's envelope; `schema` repeats per table: raw JSON, read once per text."""

    schema: msgspec.Raw = None
    payload: _Payload | None = None
    version: Any = None


_PARSE = J.struct_parser(DataWorksMessage)
_NO_PAYLOAD = _Payload()
_NO_STAMPS = Stamps()
_NO_DDL = _Ddl()


def _text(value: object) -> str | None:
    """`J.text`, strings (most values here) without the call."""
    return value if type(value) is str else J.text(value)


# a schema whose source or key texts cannot be written (nested deeper than JSON text goes): the
# message is rejected where they are read, after the checks of op and stamps
_UNWRITABLE = object()


@lru_cache(maxsize=1024)
def _schema(raw: bytes) -> tuple:
    """(source_types, column_types, temporal_units, pk_columns, db, db_schema, table, dbType,
    dbVersion) of a message's `schema` JSON (all None for null). The same text repeats for every message
    of a table, so it is read once: the maps are shared by every message with this schema, nothing changes
    them. `pk_columns` is a tuple, and each field `_UNWRITABLE` where its text cannot be written."""
    columns, keys, source = schema_parts(raw, "dataColumn", "primaryKey")
    source_types = column_types = units = None
    if columns is not None:
        source_types = dict(columns)
        column_types = {n: COLUMN_TYPES.get((k or "").upper()) or C.logical_type(k) for n, k in source_types.items()}
        units = {n: DATE_UNIT for n, k in source_types.items() if k is not None and k.upper() == "DATE"}
    try:
        texts = (
            None if keys is None else tuple(_text(k) for k in keys),
            *(_text(source.get(name)) for name in ("dbName", "schemaName", "tableName", "dbType", "dbVersion")),
        )
    except J.NotJsonObject:
        texts = (_UNWRITABLE,) * 6
    return source_types, column_types, units, *texts


def _stamp(value: object, why: str) -> int | None:
    """Epoch micros of a `payload.timestamp` millis entry; None when absent or the unknown stamp -1."""
    if type(value) is int:
        if value == -1:
            return None
        micros = value * 1000
    else:
        text = J.text(value)
        if text is None or text == "-1":
            return None
        micros, _ = C.epoch_time(text, STAMP_UNIT)
    if micros is None or micros not in LONGS:
        raise Reject(why)
    return micros


def decode_dataworks_json(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """The raw event of one DataWorks Kafka JSON / DataHub BLOB message (a split-update half keyed to pair)."""
    # the shape first (the parser and the schema reading check it): a part that is not what the
    # format says makes the message no message of it
    msg = _PARSE(message)
    raw_schema = msg.schema
    source_types, column_types, units, keys, db, db_schema, table, db_type, db_version = _schema(
        b"null" if raw_schema is None else bytes(raw_schema)
    )
    payload = msg.payload or _NO_PAYLOAD
    before, after = (None if image is None else image.dataColumn for image in (payload.before, payload.after))
    stamps = payload.timestamp or _NO_STAMPS
    ddl = payload.ddl or _NO_DDL

    raw_op = _text(payload.op)
    op = op_of(raw_op, OPS, "payload.op")
    sequence = _text(payload.sequenceId)
    # a split half has one image; a merged UPDATE_AFTER carries both and needs no partner
    is_half = (raw_op == SPLIT_BEFORE and after is None) or (raw_op == SPLIT_AFTER and before is None)
    if is_half and sequence is None:
        raise Reject(f"{raw_op} without payload.sequenceId to pair it")
    event_stamp, system_stamp = stamps.eventTime, stamps.systemTime
    event_time = _stamp(event_stamp, BAD_EVENT_TIME)
    sync_time = _stamp(system_stamp, BAD_SYNC_TIME)
    if db is _UNWRITABLE:
        raise Reject(NOT_JSON_OBJECT)

    position = _text(payload.scn)
    # meta in DataWorks' field order, each value there as text
    meta = {
        "version": msg.version,
        "dbType": db_type,
        "dbVersion": db_version,
        "eventTime": event_stamp,
        "systemTime": system_stamp,
        "checkpointTime": stamps.checkpointTime,
        "sequenceId": sequence,
        "scn": position,
        "ddlMeta": ddl.ddlMeta,
    }
    meta = {k: _text(v) for k, v in meta.items() if v is not None}
    is_row = op in C.ROW_OPS
    event = {
        "op": op,
        "raw_op": raw_op,
        "db": db,
        "db_schema": db_schema,
        "table_name": table,
        "event_time": event_time,
        # the fixed unit whenever there is a stamp; -1 ("unknown", full-load rows) stays in meta only
        "event_time_unit": None if event_time is None else STAMP_UNIT,
        "sync_time": sync_time,
        "seq": sequence,
        "position": position,
        "pk_columns": None if keys is None else list(keys),
        "before": before if is_row else None,
        "after": after if is_row else None,
        "column_types": column_types,
        "source_types": source_types,
        "temporal_units": units,
        "ddl": _text(ddl.text) if op == "DDL" else None,
        "meta": meta,
    }
    if is_half:
        event["pair_key"] = "\u0001".join(x for x in (db, table, sequence) if x is not None)
    return [event]


# ---------------------------------------------------------------- encoder
#
# Version 0.0.1 messages. Canonical types map to DataWorks' six (`LOGICAL_TO_COLUMN_TYPE`); a DECIMAL is a
# DOUBLE written as a string (every digit kept, as DataWorks itself writes decimals), the types it lacks
# STRING with their canonical text. An update is split into UPDATE_BEFOR + UPDATE_AFTER sharing `sequenceId`
# (option `merged`).

# DataWorks 2.0's op names, but the heartbeat's (an UPDATE's are chosen apart: split or merged)
ENCODE_OPS = {**OP_NAMES, "HEARTBEAT": "MHEARTBEAT"}
# each logical type as the type of COLUMN_TYPES that reads back as it, FLOAT and DECIMAL as DOUBLE
LOGICAL_TO_COLUMN_TYPE = {lg: name for name, lg in COLUMN_TYPES.items()} | {"FLOAT": "DOUBLE", "DECIMAL": "DOUBLE"}
DEFAULT_VERSION = "0.0.1"
_INTEGER = re.compile(r"-?[0-9]+")


def ddl_op(ddl: str | None) -> str:
    """The DataWorks op of a DDL statement: CREATE, ALTER, ERASE (drop), RENAME, CINDEX, DINDEX or QUERY."""
    words = re.sub(r"/\*.*?\*/", " ", ddl or "", flags=re.S).upper().split()
    first = words[0] if words else ""
    if first in ("CREATE", "DROP") and "INDEX" in words[1:4]:
        return "CINDEX" if first == "CREATE" else "DINDEX"
    return {"CREATE": "CREATE", "ALTER": "ALTER", "DROP": "ERASE", "RENAME": "RENAME"}.get(first, "QUERY")


def instant_millis(value: str):
    """Canonical TIMESTAMP text -> 13-digit epoch millis (a JSON number), a fraction finer than milliseconds
    in the `13.9` form the decoder reads back (millis plus the 9-digit nanosecond-of-second fraction); None
    if it is no instant."""
    instant = C.instant_seconds(value)
    if instant is None:
        return None
    seconds, fraction = instant
    millis = seconds * 1000 + int(fraction[:3].ljust(3, "0"))
    return E.number(f"{millis}.{fraction.ljust(9, '0')}" if len(fraction) > 3 else str(millis))


def _column_types(event: dict, same: bool) -> dict[str, str]:
    """column -> DataWorks type: a DataWorks event's own, else mapped from the canonical type."""
    if same:
        return dict(event.get("source_types") or {})
    types = event.get("column_types") or {}
    numbers = E.json_numbers(event) or set()
    images = [i for i in (event.get("before"), event.get("after")) if i]
    out = {}
    for column in dict.fromkeys([*types, *(k for i in images for k in i)]):
        logical = types.get(column, "UNKNOWN")
        values = [i[column] for i in images if i.get(column) is not None]
        if logical == "UNKNOWN" and column in numbers and values:
            out[column] = "LONG" if all(_INTEGER.fullmatch(v) for v in values) else "DOUBLE"
        else:
            out[column] = LOGICAL_TO_COLUMN_TYPE.get(logical, "STRING")
    return out


def _value(text: str | None, column_type: str, logical: str, as_number: bool | None):
    """One value; `as_number` is the source's own choice (a DataWorks event), else None (by type)."""
    if text is None:
        return None
    if column_type == "BOOLEAN" and text in ("true", "false"):
        return E.number("1" if text == "true" else "0") if as_number else text == "true"
    if column_type == "DATE" and logical == "TIMESTAMP" and as_number is not False:
        millis = instant_millis(text)
        return text if millis is None else millis
    if as_number is not None:
        return E.number(text) if as_number else text
    if column_type == "LONG" or (column_type == "DOUBLE" and logical != "DECIMAL"):
        return E.number(text)
    return text


def encode_dataworks_json(event: dict, options: Mapping[str, str]) -> list:
    op = event["op"]
    same = E.from_same_family(event, "dataworks-json")
    meta = event.get("meta") or {}
    raw_op = event.get("raw_op")
    merged = options.get("merged", "auto")
    if same and op != "UPDATE" and OPS.get(raw_op or "") == op:
        op_text = raw_op
    elif op == "DDL":
        op_text = ddl_op(event.get("ddl"))
    elif op in ENCODE_OPS:
        op_text = ENCODE_OPS[op]
    else:
        raise E.Unsupported(f"DataWorks JSON has no {op} message")
    E.require_table(event)
    column_types = _column_types(event, same) if op in C.ROW_OPS else {}
    types = event.get("column_types") or {}
    numbers = E.json_numbers(event) or set()

    def image(row: dict | None) -> dict | None:
        if row is None:
            return None
        return {
            "dataColumn": {
                k: _value(v, column_types.get(k, "STRING"), types.get(k, "UNKNOWN"), (k in numbers) if same else None)
                for k, v in row.items()
            }
        }

    source = {
        "dbType": meta.get("dbType") if same else None,
        "dbVersion": meta.get("dbVersion") if same else None,
        "dbName": event.get("db"),
        "schemaName": event.get("db_schema"),
        "tableName": event.get("table_name"),
    }
    source = {k: v for k, v in source.items() if v is not None} or None
    schema = {
        "dataColumn": [{"name": k, "type": t} for k, t in column_types.items()] or None,
        "primaryKey": event.get("pk_columns"),
        "source": source,
    }
    if same:
        stamps = {k: E.number(meta[k]) for k in ("eventTime", "systemTime", "checkpointTime") if k in meta}
    else:
        event_millis = E.epoch_millis(event.get("event_time"))
        stamps = {"eventTime": -1 if event_millis is None else event_millis}  # -1: unknown, as for full load
        if event.get("sync_time") is not None:
            stamps["systemTime"] = E.epoch_millis(event["sync_time"])
        stamps["checkpointTime"] = stamps["eventTime"]
    ddl = {"text": event.get("ddl"), "ddlMeta": meta.get("ddlMeta") if same else None} if op == "DDL" else None
    version = meta.get("version", DEFAULT_VERSION) if same else DEFAULT_VERSION
    position = meta.get("scn") if same else None

    def message(op_value: str, before: dict | None, after: dict | None, sequence: str | None) -> str:
        payload = {"before": image(before), "after": image(after), "sequenceId": sequence}
        if position is not None:
            payload["scn"] = position
        payload |= {"op": op_value, "timestamp": stamps, "ddl": ddl}
        return E.dumps({"schema": schema, "payload": payload, "version": version})

    sequence = event.get("seq")
    if op != "UPDATE":
        return [message(op_text, event.get("before"), event.get("after"), sequence)]
    before, after = event.get("before"), event.get("after")
    # `auto`: split as a DataWorks source had it, and the others
    split = (meta_keys.BEFORE_RAW_OP in meta or not same) if merged == "auto" else merged == "false"
    if before is None or not split:  # one message: merged, or an after image alone
        op_value = raw_op if same and OPS.get(raw_op or "") == "UPDATE" else SPLIT_AFTER
        if op_value == SPLIT_AFTER and before is None and sequence is None:
            sequence = E.synthetic_sequence(event)  # a lone after half still needs a sequenceId
        return [message(op_value, before, after, sequence)]
    # split halves pair by sequenceId: one is made up when the event has none
    sequence = sequence if sequence is not None else E.synthetic_sequence(event)
    before_op = meta.get(meta_keys.BEFORE_RAW_OP, SPLIT_BEFORE) if same else SPLIT_BEFORE
    return [message(before_op, before, None, sequence), message(SPLIT_AFTER, None, after, sequence)]


OPTIONS = (
    Option(
        "merged",
        "auto",
        "how the encoder writes an UPDATE: true one message with both images, false split halves, "
        "auto as a DataWorks source had it (others split)",
        choices=("auto", "true", "false"),
    ),
)


def recognise_dataworks_json(message: dict) -> bool:
    """A `payload` object with marks DataWorks 2.0 does not write: `sequenceId`, a `schema` with
    `dataColumn`/`primaryKey`, or the heartbeat and split-update ops."""
    payload = message.get("payload")
    if not isinstance(payload, dict):
        return False
    schema = message.get("schema")
    return (
        "sequenceId" in payload
        or (isinstance(schema, dict) and ("dataColumn" in schema or "primaryKey" in schema))
        or payload.get("op") in ("MHEARTBEAT", "UPDATE_BEFOR", "UPDATE_AFTER")
    )


DATAWORKS_JSON = Codec(
    "dataworks-json",
    decode_dataworks_json,
    encode_dataworks_json,
    options=OPTIONS,
    update_has_before=False,
    split_update=True,
    event_time_unit="ms",
    description="DataWorks Kafka JSON / DataHub BLOB payload",
    recognise=recognise_dataworks_json,
)
