"""Canal JSON as OMS and DTS write it: `data`/`old` row arrays, `sqlType`, `mysqlType`, `es`/`ts`.

One message may carry several rows; each becomes an event, paired with the `old` entry at the same
index. `old` holds only the changed columns, so the before image is `data` overlaid with `old`.
DTS instances created before 2022-03-20 swap `data` and `old` (option `legacy=true`). OMS writes
binary values as base64 (`binary=base64`, the default); open-source canal writes them as ISO-8859-1
text (`binary=latin1`). TIMESTAMP text without an offset is read in `timezone` (default UTC).

The encoders write one message per event (a multi-row message comes back as one message per row):
the canal fields as OMS writes them (every field, null where unknown) or as DTS does (only the fields
it has, plus `id`/`gtid`). Canal `old` holds the changed columns' before values. TIMESTAMP values
go out as OMS epoch `sec.fraction` text (OMS) or as date-time text in `timezone` (DTS).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any

import msgspec
import orjson

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import (
    BAD_EVENT_TIME,
    BAD_SYNC_TIME,
    DDL_KINDS,
    LONGS,
    Codec,
    Option,
    RawEvent,
    Reject,
    binary_option,
    overlay,
    timezone_option,
    unknown_op,
)
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

ROW_TYPES = {"INSERT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE", "INIT": "INSERT"}
CONTROL_TYPES = {
    "TRUNCATE": "TRUNCATE",
    **dict.fromkeys([*DDL_KINDS, "DDL", "DROP"], "DDL"),
}
META_FIELDS = ("id", "gtid", "isDdl", "serverId")
# MySQL's REAL is a DOUBLE (unless REAL_AS_FLOAT), unlike REAL elsewhere
MYSQL_TYPE_OVERRIDES = {"real": "DOUBLE"}
_OVERRIDES = tuple(MYSQL_TYPE_OVERRIDES.items())
_ROWS = list[dict[str, Any] | None] | None


class CanalMessage(msgspec.Struct):
    """A canal message's fields as canal types them; the type maps repeat per table: raw JSON, read once."""

    database: Any = None
    table: Any = None
    type: Any = None
    isDdl: Any = None  # noqa: N815 - canal's field names
    es: Any = None
    ts: Any = None
    sql: Any = None
    pkNames: list | None = None  # noqa: N815
    sqlType: msgspec.Raw = None  # noqa: N815
    mysqlType: msgspec.Raw = None  # noqa: N815
    data: _ROWS = None
    old: _ROWS = None
    id: Any = None
    gtid: Any = None
    serverId: Any = None  # noqa: N815


_PARSE = J.struct_parser(CanalMessage)


@lru_cache(maxsize=1024)
def _type_map(raw: bytes) -> dict[str, str | None] | None:
    """A `mysqlType` / `sqlType` object as text; Reject when it is no object (null reads as absent)."""
    if raw == b"null":
        return None
    return {k: v if type(v) is str else J.text(v) for k, v in J.parse_object(raw).items()}


@lru_cache(maxsize=1024)
def _column_types(mysql_raw: bytes | None, sql_raw: bytes | None) -> tuple[dict | None, dict | None, str | None]:
    """(source_types, column_types, meta `sqlType` JSON) of a message's (mysqlType, sqlType) JSON.

    The type name decides; where the name is unknown, the java.sql.Types code still tells. The dicts
    are shared by every message with these types: nothing changes them.
    """
    mysql_types = None if mysql_raw is None else _type_map(mysql_raw)
    sql_types = None if sql_raw is None else _type_map(sql_raw)
    sql_json = None if sql_types is None else orjson.dumps(sql_types).decode()
    by_code = (
        None if sql_types is None else {k: C.SQL_TYPE_CODE_TO_LOGICAL.get(v, "UNKNOWN") for k, v in sql_types.items()}
    )
    by_name = None if mysql_types is None else {k: C.logical_type(v, _OVERRIDES) for k, v in mysql_types.items()}
    if by_name is None or by_code is None:
        return mysql_types, by_code if by_name is None else by_name, sql_json
    known_names = {k: v for k, v in by_name.items() if v is not None and v != "UNKNOWN"}
    return mysql_types, {**by_name, **by_code, **known_names}, sql_json


_MAX_EPOCH = 10**29
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def _time_of(value: object, text: str | None) -> tuple[int | None, str | None]:
    """`canonical.time_of` of a parsed time, with JSON integers (canal's epoch millis) read without a regex."""
    if type(value) is int and -_MAX_EPOCH < value < _MAX_EPOCH:
        digits = len(text) - (value < 0)
        unit = "s" if digits <= 11 else "ms" if digits <= 14 else "us" if digits <= 17 else "ns"
        micros = value * 10**6 // _PER_SECOND[unit]
        return (micros if micros in LONGS else None), unit
    return C.time_of(text)


def decode_canal(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """One canal message -> one raw event per row of `data` (`old` in legacy DTS), or one control event.

    In the order a message is checked: its shape (the parser), the type, the rows a row change must
    have, the times; then the types, meta and the events.
    """
    msg = _PARSE(message)
    text = J.text
    raw_type = text(msg.type)
    is_ddl = text(msg.isDdl)
    if is_ddl is not None:
        is_ddl = is_ddl.lower()
    op = CONTROL_TYPES.get(raw_type) or ("DDL" if is_ddl == "true" else ROW_TYPES.get(raw_type))
    if raw_type is None and is_ddl is not None and is_ddl != "true":
        raise Reject("missing type")
    if op is None:
        raise unknown_op("type", raw_type)
    is_row = op in C.ROW_OPS
    # legacy DTS writes the current row in `old` and the previous values in `data`
    if options.get("legacy", "false").lower() == "true":
        current, previous = msg.old, msg.data
    else:
        current, previous = msg.data, msg.old
    if is_row and (not current or None in current):
        raise Reject(f"canal {raw_type} message without rows")
    es, ts = text(msg.es), text(msg.ts)
    event_time, event_time_unit = _time_of(msg.es, es)
    if event_time is None and event_time_unit is not None:
        raise Reject(BAD_EVENT_TIME)
    sync_time = _time_of(msg.ts, ts)[0]
    if sync_time is None and ts is not None:
        raise Reject(BAD_SYNC_TIME)

    source_types, column_types, sql_json = _column_types(
        None if msg.mysqlType is None else bytes(msg.mysqlType), None if msg.sqlType is None else bytes(msg.sqlType)
    )
    sql = text(msg.sql)
    # the fields without a canonical column, as text: `id`, `gtid`, ..., the `sql` of a row change (a DDL's
    # is its `ddl`), `sqlType` as JSON, `es` and `ts` as written
    meta = {name: text(value) for name in META_FIELDS if (value := getattr(msg, name)) is not None}
    written = (("sql", None if op == "DDL" else sql), ("sqlType", sql_json), ("es", es), ("ts", ts))
    meta |= {name: value for name, value in written if value is not None}
    gtid = text(msg.gtid)
    base = {
        "op": op,
        "raw_op": raw_type,
        "db": text(msg.database),
        "table_name": text(msg.table) or None,
        "event_time": event_time,
        "event_time_unit": event_time_unit,
        "sync_time": sync_time,
        "tx_id": gtid,
        "seq": text(msg.id),
        "position": gtid,
        "pk_columns": None if msg.pkNames is None else [text(name) for name in msg.pkNames],
        "source_types": source_types,
    }
    # the types are cached, so shared: each event gets its own copy
    if not is_row:
        return [base | {"column_types": column_types, "ddl": sql if op == "DDL" else None, "meta": meta}]
    # one event per row, with its images and its own meta
    meta[meta_keys.ROW_COUNT] = str(len(current))
    n_previous = len(previous) if previous is not None else 0
    events = []
    for index, row in enumerate(current):
        row_meta = {**meta, meta_keys.ROW_INDEX: str(index)}
        if op == "INSERT":
            before = None
        elif op == "DELETE":
            before, row = row, None
        else:  # UPDATE: `old` holds the changed columns' previous values
            old_row = previous[index] if index < n_previous else None
            before = overlay(row, old_row)
            row_meta[meta_keys.CHANGED_COLUMNS] = meta_keys.changed_columns_text(tuple(old_row or ()))
        own = {"before": before, "after": row, "column_types": column_types, "meta": row_meta, "row_index": index}
        events.append(base | own)
    return events


CANAL_FORMATS = ("oms-canal", "dts-canal")
# raw ops that mark a full-load row in other formats (OMS Default ROW, Debezium r, DTS INIT)
FULL_LOAD_RAW_OPS = ("INIT", "ROW", "r")
# MySQL's BOOLEAN (not tinyint): the decoder then reads the column back as BOOLEAN, not INT
CANAL_MYSQL_TYPES = {**E.LOGICAL_TO_MYSQL, "BOOLEAN": "boolean"}


def _local_text(value: str, zone: dt.tzinfo) -> str:
    """`2020-11-24T16:01:02.012345Z` -> `2020-11-24 16:01:02.012345` in `zone` (binlog canal's TIMESTAMP text)."""
    match = C.INSTANT.fullmatch(value)
    if not match:
        return value
    day, clock, fraction = match.groups()
    t = dt.datetime.fromisoformat(f"{day}T{clock}+00:00").astimezone(zone)
    fraction = "." + fraction if fraction else ""
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}{fraction}"


def _values(event: dict, image: dict | None, options: Mapping[str, str], oms: bool) -> dict | None:
    """An image as canal writes it: TIMESTAMP as OMS epoch text (OMS) or local date-time text in
    `timezone` (DTS, as binlog canal does), BYTES per `binary`, numbers where the source had them."""
    if image is None:
        return None
    types = event.get("column_types") or {}
    zone = C.zone(options.get("timezone", "UTC"))
    binary = options.get("binary", "base64")

    def value(key: str, text: str | None) -> str | None:
        kind = types.get(key)
        if text is None or kind not in ("TIMESTAMP", "BYTES"):
            return text
        if kind == "BYTES":  # as the `binary` option writes them (ISO-8859-1 text or hex)
            written = E.written_bytes(text, binary)
            if written is None:
                raise E.Unsupported(f"BYTES value is not standard base64: {text[:40]!r}")
            return written.lower() if binary == "base16" else written
        return E.instant_to_epoch_text(text) if oms else _local_text(text, zone)

    return E.image_json(event, {k: value(k, v) for k, v in image.items()})


def _canal_type(event: dict, same: bool, dts: bool) -> str:
    op, raw = event["op"], event.get("raw_op")
    if same and raw and ((ROW_TYPES.get(raw) or CONTROL_TYPES.get(raw)) == op or op == "DDL"):
        return raw  # includes a type canal marked DDL only through isDdl
    if op == "INSERT":
        return "INIT" if dts and raw in FULL_LOAD_RAW_OPS else "INSERT"
    if op in ("UPDATE", "DELETE", "TRUNCATE"):
        return op
    if op == "DDL":
        # the DDL kind is not in the canonical row: keep a canal name the source gave, else a generic one
        return raw if raw in DDL_KINDS else ("DDL" if dts else "QUERY")
    why = " (an UPSERT is neither an INSERT nor an UPDATE)" if op == "UPSERT" else ""
    raise E.Unsupported(f"canal has no {op} message{why}")


@lru_cache(maxsize=1024)
def _sql_type_codes(sql_types: str) -> dict:
    """The `sqlType` object of a message's meta, codes as JSON numbers: one shared dict per table."""
    return {k: E.number(v) for k, v in E.shared_json(sql_types).items()}


def _types(event: dict, same: bool) -> tuple[dict | None, dict | None]:
    """(mysqlType, sqlType): as the canal source wrote them, else from the logical types."""
    if same:
        sql_types = (event.get("meta") or {}).get("sqlType")
        return event.get("source_types"), None if sql_types is None else _sql_type_codes(sql_types)
    types = {k: t for k, t in (event.get("column_types") or {}).items() if t in CANAL_MYSQL_TYPES}
    if not types:
        return None, None
    return {k: CANAL_MYSQL_TYPES[t] for k, t in types.items()}, {k: E.LOGICAL_TO_SQL_TYPE[t] for k, t in types.items()}


def _encode(event: dict, options: Mapping[str, str], dts: bool) -> list:
    same = E.from_same_family(event, *CANAL_FORMATS)
    op = event["op"]
    canal_type = _canal_type(event, same, dts)
    E.require_table(event)
    meta = event.get("meta") or {}
    legacy = options.get("legacy", "false").lower() == "true"
    data = old = None
    if op in C.ROW_OPS:
        if op == "UPDATE" and event.get("before") is None:
            raise E.Unsupported("UPDATE without a before image: canal `old` cannot be built")
        current = event["before"] if op == "DELETE" else event["after"]
        data = [_values(event, current, options, not dts)]
        if op == "UPDATE":
            before = event["before"]
            changed = [k for k in E.changed_columns(event, *CANAL_FORMATS) if k in before]
            old = [_values(event, {k: before[k] for k in changed}, options, not dts)]
        if legacy:  # DTS instances created before 2022-03-20: the current row in `old`
            data, old = old, data
    mysql_types, sql_types = _types(event, same)
    if same:
        es, ts = meta.get("es"), meta.get("ts")
        is_ddl = meta.get("isDdl", str(op in ("DDL", "TRUNCATE")).lower()) == "true"
        sql = event.get("ddl") if op == "DDL" else meta.get("sql")
        extra = {name: meta.get(name) for name in ("id", "gtid", "serverId")}
    else:
        es, ts = (E.epoch_millis(event.get(k)) for k in ("event_time", "sync_time"))
        es, ts = (None if v is None else str(v) for v in (es, ts))
        is_ddl = op in ("DDL", "TRUNCATE")
        sql = event.get("ddl") or ""
        extra = {"id": event.get("seq"), "gtid": event.get("tx_id")} if dts else {}
    message = {
        "database": event.get("db"),
        "sqlType": sql_types,
        "data": data,
        "pkNames": event.get("pk_columns"),
        "old": old,
        "mysqlType": mysql_types,
        "type": canal_type,
        "table": event.get("table_name") or "",
        "es": E.number(es),
        "isDdl": is_ddl,
        "ts": E.number(ts),
        "sql": sql,
        "id": E.number(extra.get("id")),
        "gtid": extra.get("gtid"),
        "serverId": E.number(extra.get("serverId")),
    }
    if dts:  # DTS leaves out what it does not have (see its examples)
        message = {k: v for k, v in message.items() if v is not None}
    else:  # OMS writes every canal field, null where it has nothing; `id`/`gtid` only from DTS twins
        message = {k: v for k, v in message.items() if k not in ("id", "gtid", "serverId") or v is not None}
    return [E.dumps(message)]


OPTIONS = (
    Option(
        "legacy",
        "false",
        "true for DTS instances created before 2022-03-20 (`data` and `old` swapped)",
        choices=("false", "true"),
    ),
    binary_option("base64", "base64 (OMS), latin1 (open-source canal) or base16"),
    timezone_option("TIMESTAMP text"),
)
# canal-server replaying its binlog after a restart sends a change again with a new `ts` (sync time)
# and batch `id` (seq); its `es`, images and gtid stay
REPLAYED = ("sync_time", "seq", "meta.ts", "meta.id")


def recognise_canal(message: dict, dts: bool) -> bool:
    """Canal's fields, with (`dts`) or without the batch `id` or `gtid` DTS writes and OMS does not."""
    has = message.__contains__
    canal = has("isDdl") or (has("database") and has("table") and has("type") and (has("data") or has("sql")))
    return canal and (has("id") or has("gtid")) == dts


OMS_CANAL = Codec(
    "oms-canal",
    decode_canal,
    partial(_encode, dts=False),
    options=OPTIONS,
    delivery_fields=REPLAYED,
    event_time_unit="ms",
    description="Canal JSON (OMS)",
    recognise=partial(recognise_canal, dts=False),
)
DTS_CANAL = replace(
    OMS_CANAL, format_id="dts-canal", encode=partial(_encode, dts=True), description="Canal JSON (DTS)",
    recognise=partial(recognise_canal, dts=True),
)  # fmt: skip
