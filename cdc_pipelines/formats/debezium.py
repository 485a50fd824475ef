"""Debezium JSON as OMS writes it (seed 000): with or without `schema`, flattened, and after the SMT.

Values are converted only where a type is known: from the Kafka Connect schema when the message has
one (logical names such as `io.debezium.time.Date` decide temporal conversions; a bare int32/int64
stays an integer), or from the `column_types` option (`c22:DATE,c23:TIME`), which applies the
OMS encodings of seed 000 (DATE days, TIME micros, DATETIME millis). OMS writes BYTES as base16
(`binary=base16`, the default); standard Debezium writes base64 (`binary=base64`). A Connect
`org.apache.kafka.connect.data.Decimal` column is DECIMAL and keeps its value's digits as written:
decimal text passes, the base64 of an unscaled integer does not fit and is rejected.

A message whose envelope has something other than an object (or null) where Debezium has one
(`payload`, `source`, `before`, `after`, `transaction`, `schema` and its `fields` structs) is no Debezium
message: "not a valid JSON object", before any other check. A schema's types are worked out once per text.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any

import msgspec
import orjson

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import (
    BAD_SYNC_TIME,
    LONGS,
    NOT_JSON_OBJECT,
    Codec,
    Option,
    OptionError,
    RawEvent,
    Reject,
    binary_option,
    op_of,
)
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

OPS = {
    "c": "INSERT",
    "r": "INSERT",
    "u": "UPDATE",
    "d": "DELETE",
    "t": "TRUNCATE",
    "m": "OTHER",
    "HEARTBEAT": "HEARTBEAT",
}
SMT_FIELDS = r"^__(deleted|op|table|db|schema|lsn|ts_ms|source_[A-Za-z_]+)$"
SMT_OPS = {"c": "INSERT", "r": "INSERT", "u": "UPDATE", "d": "DELETE"}
# the envelope's images: the Connect schema's structs of these names type the columns
IMAGE_FIELDS = ("after", "before")
_ROW_OPS = frozenset(C.ROW_OPS)
_SMT_FIELD = re.compile(SMT_FIELDS)


def parse_column_types(spec: str) -> dict[str, str]:
    """`c22:DATE,c23:TIME` -> {"c22": "DATE", "c23": "TIME"} (the logical types of `model.canonical`)."""
    out: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, logical = item.rpartition(":")
        if not sep or logical.upper() not in C.LOGICAL_TYPES:
            raise OptionError(
                f"column_types entry {item!r} is not NAME:TYPE with TYPE one of {', '.join(C.LOGICAL_TYPES)}"
            )
        out[name] = logical.upper()
    return out


@lru_cache(maxsize=64)
def _declared(spec: str) -> tuple[dict[str, str], dict[str, str]]:
    """(types, temporal units) given by the `column_types` option (empty when it declares none)."""
    declared = parse_column_types(spec)
    units = {k: C.OMS_DEBEZIUM_TEMPORAL_UNITS[v] for k, v in declared.items() if v in C.OMS_DEBEZIUM_TEMPORAL_UNITS}
    return declared, units


def _is_object_list(value, inner: str | None) -> bool:
    """True where `value` is null or an array of nulls and objects whose `inner` is null or an
    object list itself (`schema.fields[].fields[]`), each column's `parameters` null or an object."""
    if value is None:
        return True

    def fits(item: dict) -> bool:
        if inner is not None:
            return _is_object_list(item.get(inner), None)
        return item.get("parameters") is None or type(item["parameters"]) is dict

    return type(value) is list and all(item is None or (type(item) is dict and fits(item)) for item in value)


def _schema_columns(fields: list) -> tuple:
    """(field, type, name) of every column of the schema's `before`/`after` structs, as text. A column
    without a field name names nothing and is left out."""
    text = J.text
    return tuple(
        (text(c.get("field")), text(c.get("type")), text(c.get("name")))
        for f in fields
        if f is not None and f.get("field") in IMAGE_FIELDS
        for c in (f.get("fields") or ())
        if c is not None and c.get("field") is not None
    )


_OBJECT = dict[str, Any] | None


class _Envelope(msgspec.Struct, gc=False):
    """The Debezium envelope's fields: under `payload` (Debezium) or at the top (DebeziumFlatten)."""

    op: Any = None
    source: _OBJECT = None
    before: _OBJECT = None
    after: _OBJECT = None
    transaction: _OBJECT = None
    ts_ms: Any = None
    ts_us: Any = None
    ts_ns: Any = None


class DebeziumMessage(_Envelope, gc=False):
    """The envelope (at the top, or in `payload`) and its Connect `schema`: raw JSON, read once per text."""

    schema: msgspec.Raw = None
    payload: _Envelope | None = None


_PARSE = J.struct_parser(DebeziumMessage)
# (logical types, temporal units, source types, whether the message has a schema, value rules)
_NO_SCHEMA: tuple = (None, None, None, False, ())


def _variable_scale_decimal(value):
    """io.debezium.data.VariableScaleDecimal: the struct `{"scale": s, "value": base64 of the unscaled
    integer}` Debezium writes -> the decimal's digits (a value of any other shape is left as it is)."""
    if type(value) is not dict or type(value.get("scale")) is not int or type(value.get("value")) is not str:
        return value
    try:
        unscaled = int.from_bytes(base64.b64decode(value["value"], validate=True), "big", signed=True)
    except (binascii.Error, ValueError):
        return value
    return C.scaled_decimal_text(unscaled, value["scale"])


def _zoned_time(value):
    """io.debezium.time.ZonedTime: a time of day in UTC written with its `Z` -> the time (TIME)."""
    return value[:-1] if type(value) is str and value.endswith("Z") else value


def _wkb(value):
    """io.debezium.data.geometry.*: the struct `{"wkb": base64, "srid": n}` -> its WKB (BYTES; the
    SRID is not kept)."""
    return value["wkb"] if type(value) is dict and type(value.get("wkb")) is str else value


# values whose Connect name says how Debezium wrote them, turned into the text of their logical type
# before the canonical rules apply (`CONNECT_NAME_TO_LOGICAL`)
NAMED_VALUES = {
    "io.debezium.data.VariableScaleDecimal": _variable_scale_decimal,
    "io.debezium.time.ZonedTime": _zoned_time,
    "io.debezium.data.geometry.Geometry": _wkb,
    "io.debezium.data.geometry.Geography": _wkb,
    "io.debezium.data.geometry.Point": _wkb,
}


def schema_info_of(columns: tuple[tuple[str, str | None, str | None], ...]) -> tuple:
    """The schema info (`_NO_SCHEMA`'s fields) of a schema's (field, Connect type, Connect name) columns; a
    column named twice (in `before` and in `after`) takes its last entry."""
    types = {field: C.CONNECT_NAME_TO_LOGICAL.get(name) or C.logical_type(kind) for field, kind, name in columns}
    units = {field: C.CONNECT_TEMPORAL_UNITS[name] for field, _, name in columns if name in C.CONNECT_TEMPORAL_UNITS}
    source_types = {field: " ".join(x for x in (kind, name) if x is not None) for field, kind, name in columns}
    rules = {field: NAMED_VALUES[name] for field, _, name in columns if name in NAMED_VALUES}
    return types or None, units or None, source_types, True, tuple(rules.items())


def _apply_rules(image: dict | None, rules: tuple) -> dict | None:
    if image:
        for column, rule in rules:
            if column in image:
                image[column] = rule(image[column])
    return image


@lru_cache(maxsize=1024)
def _schema_info(raw: bytes) -> tuple:
    """(logical types, temporal units, source types, has schema) of a message's `schema` JSON;
    NotJsonObject where it is no object, or its `fields` no array of structs (a message that is no
    Debezium message). The maps are shared by every message with this schema: nothing changes them."""
    if raw == b"null":
        return _NO_SCHEMA
    fields = J.parse_object(raw).get("fields")
    if fields is None:
        return None, None, None, True, ()
    if not _is_object_list(fields, "fields"):
        raise Reject(NOT_JSON_OBJECT)
    return schema_info_of(_schema_columns(fields))


def _epoch_millis(value: object, text: str | None) -> tuple[int | None, str | None]:
    """`canonical.epoch_time(text, "ms")` of a parsed value, JSON integers read without a regex."""
    if type(value) is int:
        micros = value * 1000
        return (micros if micros in LONGS else None), "ms"
    return C.epoch_time(text, "ms")


def decode_debezium(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """One Debezium (with `payload`) or DebeziumFlatten message -> its raw event; a field is read under
    `payload`, else at the top."""
    m = _PARSE(message)
    raw_schema = m.schema
    return envelope_event(m, _NO_SCHEMA if raw_schema is None else _schema_info(bytes(raw_schema)), options)


def envelope_event(m: DebeziumMessage, schema_info: tuple, options: Mapping[str, str]) -> list[RawEvent]:
    """The raw event of a parsed Debezium envelope with its schema's (types, units, source types, has
    schema): what the JSON decoder and the Avro one (`debezium_avro`) share once a message is read."""
    schema_types, schema_units, source_types, has_schema, rules = schema_info
    p = m.payload or m
    raw_op = J.text(p.op if p.op is not None else m.op)
    op = op_of(raw_op, OPS, "op")
    stamp = p.ts_ms if p.ts_ms is not None else m.ts_ms
    sync_written = stamp if type(stamp) is str else J.text(stamp)
    sync_time, _ = _epoch_millis(stamp, sync_written)
    if sync_time is None and sync_written is not None:
        raise Reject(BAD_SYNC_TIME)

    # `source` and `transaction` entries and `ts_*` stamps go into meta as text (`source.` and
    # `transaction.` keys, nulls kept, as Spark kept them)
    meta: dict[str, str | None] = {}
    db = db_schema = table = event_time = unit = position = tx_id = None
    source = p.source if p.source is not None else m.source
    if source is not None:
        stamp = source.get("ts_ms")
        meta.update(("source." + key, value) for key, value in J.texts(source).items())
        src = source.get
        event_time, unit = _epoch_millis(stamp, src("ts_ms"))
        file, pos = src("file"), src("pos")
        if file and pos is not None:
            position = f"{file}:{pos}"
        else:
            position = next((v for v in (pos, src("gtid"), src("lsn")) if v is not None), None)
        db, db_schema, table, tx_id = src("db"), src("schema"), src("table"), src("txId")
    transaction = p.transaction if p.transaction is not None else m.transaction
    if transaction is not None:
        meta.update(("transaction." + key, value) for key, value in J.texts(transaction).items())
        if transaction.get("id") is not None:
            tx_id = transaction["id"]
    if sync_written is not None:
        meta["ts_ms"] = sync_written
    for name in ("ts_us", "ts_ns"):
        value = getattr(p, name) if getattr(p, name) is not None else getattr(m, name)
        if value is not None:
            meta[name] = J.text(value)
    if has_schema:
        meta[meta_keys.SCHEMA] = "true"

    declared_types, declared_units = _declared(options.get("column_types", ""))
    before = after = None
    if op in _ROW_OPS:
        before = p.before if p.before is not None else m.before
        after = p.after if p.after is not None else m.after
        if rules:
            before, after = _apply_rules(before, rules), _apply_rules(after, rules)
    return [
        {
            "op": op,
            "raw_op": raw_op,
            "db": db,
            "db_schema": db_schema,
            "table_name": table,
            "event_time": event_time,
            "event_time_unit": unit,
            "sync_time": sync_time,
            "tx_id": tx_id,
            "position": position,
            "before": before,
            "after": after,
            # the schema's maps are shared; declared types (an option) are merged into a new one
            "column_types": {**(schema_types or {}), **declared_types} if declared_types else schema_types,
            "temporal_units": {**(schema_units or {}), **declared_units} if declared_units else schema_units,
            "source_types": source_types,
            "meta": meta,
        }
    ]


def decode_debezium_smt(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """One DebeziumSmt message (the flattened row plus `__deleted` and the SMT's `__` fields) -> its raw event."""
    try:
        m = J.parse_object(message)
    except J.NotJsonObject:
        raise Reject(NOT_JSON_OBJECT) from None
    row: dict = {}
    extra: dict = {}  # the SMT's own fields
    for key, value in m.items():
        (extra if key.startswith("__") and _SMT_FIELD.match(key) is not None else row)[key] = value
    text = J.text
    deleted = text(extra.get("__deleted"))
    if deleted is not None:
        deleted = deleted.lower()
    smt_op = text(extra.get("__op"))
    if deleted is None and smt_op is None:
        raise Reject("missing __deleted")
    if deleted == "true":
        op = "DELETE"
    elif smt_op is not None:
        op = SMT_OPS.get(smt_op)
    else:
        op = "UPSERT" if deleted == "false" else None
    if op is None:
        raise Reject(f"unknown __deleted/__op value '{smt_op if smt_op is not None else deleted}'")
    if not row:
        raise Reject("no row columns")
    event_time, unit = C.epoch_time(text(extra.get("__source_ts_ms")), "ms")
    db, table = text(extra.get("__db")), text(extra.get("__table"))
    declared_types, declared_units = _declared(options.get("column_types", ""))
    return [
        {
            "op": op,
            "raw_op": smt_op if smt_op is not None else "__deleted=" + deleted,
            "db": db if db is not None else options.get("db") or None,
            "table_name": table if table is not None else options.get("table") or None,
            "event_time": event_time,
            "event_time_unit": unit,
            "before": row if op == "DELETE" else None,
            "after": None if op == "DELETE" else row,
            "column_types": dict(declared_types) if declared_types else None,
            "temporal_units": declared_units or None,
            "meta": {key: text(value) for key, value in extra.items()},
        }
    ]


# ---------------------------------------------------------------- encoders
#
# What they write (seed 000 Debezium type table): op c/u/d/HEARTBEAT (`r` and `t` kept where the
# event came from Debezium), BYTES as base16 (option `binary`), DATE as days, TIME as micros and
# DATETIME as millis since the epoch where the column is typed, TIMESTAMP as the ISO string. With a
# schema (oms-debezium, option `schema`), each column gets a Kafka Connect type and, for temporal
# columns, the Debezium logical name whose unit keeps the value's fraction digits, so the decoder
# converts the integers back without a `column_types` option.

ENCODE_OPS = {"INSERT": "c", "UPDATE": "u", "DELETE": "d", "HEARTBEAT": "HEARTBEAT", "TRUNCATE": "t"}
# the formats of one Debezium envelope (JSON, flattened, Avro): an event of one is written back as it came
DEBEZIUM_FAMILY = ("oms-debezium", "oms-debezium-flatten", "debezium-avro-confluent")
VALUE_FAMILY = (*DEBEZIUM_FAMILY, "oms-debezium-smt")
SMT_ADD_FIELDS = ("op", "table", "db", "schema", "ts_ms", "source.ts_ms")
# source / transaction fields Debezium writes as JSON numbers (others are strings)
_NUMERIC_FIELDS = frozenset(
    {"ts_ms", "ts_us", "ts_ns", "server_id", "pos", "row", "thread", "lsn", "txId", "xmin", "total_order",
     "data_collection_order", "event_serial_no", "__ts_ms", "__source_ts_ms", "__lsn"}
)  # fmt: skip
_PER_SECOND = {"ms": 1000, "us": 10**6, "ns": 10**9}
_EPOCH_DAY = dt.date(1970, 1, 1)
# logical type -> (Kafka Connect type, logical name) in a written schema; TIME/DATETIME pick their
# name by the fraction digits of the values (see `_temporal_name`)
CONNECT_SCHEMA_TYPES = {
    "BOOLEAN": ("boolean", None), "INT": ("int64", None), "DECIMAL": ("string", None), "FLOAT": ("float32", None),
    "DOUBLE": ("float64", None), "STRING": ("string", None), "BYTES": ("bytes", None),
    "DATE": ("int32", "io.debezium.time.Date"), "TIMESTAMP": ("string", "io.debezium.time.ZonedTimestamp"),
    "ZONED_DATETIME": ("string", None), "INTERVAL": ("string", None), "JSON": ("string", "io.debezium.data.Json"),
}  # fmt: skip
_TEMPORAL_NAMES = {
    "TIME": ((6, "io.debezium.time.MicroTime"), (9, "io.debezium.time.NanoTime")),
    "DATETIME": (
        (3, "io.debezium.time.Timestamp"),
        (6, "io.debezium.time.MicroTimestamp"),
        (9, "io.debezium.time.NanoTimestamp"),
    ),
}


def temporal_count(value: str, logical: str, unit: str) -> int | None:
    """The integer Debezium writes for canonical DATE/TIME/DATETIME text in `unit`, or None.

    DATE -> days since 1970-01-01; TIME -> `unit`s since midnight (under 24 h only: the decoder reads
    no more); DATETIME -> `unit`s since 1970-01-01 00:00 (naive). A value with non-zero digits
    beyond the unit is Unsupported: no digit is ever cut.
    """
    parts = E.temporal_parts(value, logical)
    if parts is None:
        return None
    days = (dt.date(parts["year"], parts["month"], parts["day"]) - _EPOCH_DAY).days if "year" in parts else 0
    if logical == "DATE":
        return days if unit == "days" else None
    per = _PER_SECOND.get(unit)
    clock = parts["hour"] * 3600 + parts["minute"] * 60 + parts["second"]
    if per is None or (logical == "TIME" and clock >= 86400):
        return None
    fraction = E.fraction_digits(parts["fraction"], len(str(per)) - 1, value, f"Debezium {unit}")
    return (days * 86400 + clock) * per + int(fraction or 0)


def _temporal_name(logical: str, values: list[str]) -> str:
    """The Debezium logical name for a TIME/DATETIME column whose unit holds every fraction digit."""
    longest = max((len((E.temporal_parts(v, logical) or {}).get("fraction", "")) for v in values), default=0)
    return next(name for digits, name in _TEMPORAL_NAMES[logical] if longest <= digits or digits == 9)


class _Values:
    """Writes one event's image values the Debezium way (see the module notes above).

    From a Debezium-family event the JSON number-or-string choice is the one the source made
    (`cdc.json_numbers`); otherwise INT/FLOAT/DOUBLE (and untyped values the source wrote as
    numbers) are numbers, DECIMAL a string (OMS: "STRING ... in full"), BOOLEAN true/false.
    """

    def __init__(self, event: dict, options: Mapping[str, str], columns: Mapping[str, tuple[str, str | None]]):
        self.types = event.get("column_types") or {}
        # the unit a schema's logical name (`columns`) gives, else the OMS unit of the column's type (seed 000)
        self.units = {c: C.OMS_DEBEZIUM_TEMPORAL_UNITS.get(t) for c, t in self.types.items()}
        self.units |= {c: C.CONNECT_TEMPORAL_UNITS[n] for c, (_, n) in columns.items() if n in C.CONNECT_TEMPORAL_UNITS}
        self.binary = options.get("binary", "base16")
        self.same = E.from_same_family(event, *VALUE_FAMILY)
        self.numbers = E.json_numbers(event) or set()
        # a ZonedTime column of a Debezium event is written back with the `Z` its decoder took off
        named = (event.get("source_types") or {}) if self.same else {}
        self.zoned = {c for c, t in named.items() if t.endswith(" io.debezium.time.ZonedTime")}

    def value(self, column: str, text: str | None):
        if text is None:
            return None
        if column in self.zoned and not text.endswith("Z"):
            return text + "Z"
        logical = self.types.get(column, "UNKNOWN")
        as_number = column in self.numbers
        if logical == "BYTES":  # a value that is not standard base64 as it is
            written = E.written_bytes(text, self.binary)
            return text if written is None else written
        unit = self.units.get(column)
        if logical in ("DATE", "TIME", "DATETIME") and unit and (as_number or not self.same):
            count = temporal_count(text, logical, unit)
            return text if count is None else orjson.Fragment(str(count).encode())
        if logical == "BOOLEAN" and text in ("true", "false"):
            if self.same and as_number:
                return orjson.Fragment(b"1" if text == "true" else b"0")
            return text == "true"
        if self.same:
            return E.number(text) if as_number else text
        if logical in ("INT", "FLOAT", "DOUBLE") or (logical == "UNKNOWN" and as_number):
            return E.number(text)
        return text

    def image(self, image: dict | None) -> dict | None:
        return None if image is None else {k: self.value(k, v) for k, v in image.items()}


def _plain_field(key: str, value: str | None):
    """A source/transaction/SMT field from `meta` text: a number where Debezium writes one."""
    return E.number(value) if key in _NUMERIC_FIELDS and value is not None and value.isdigit() else value


def _written_columns(event: dict, same: bool) -> dict[str, tuple[str, str | None]]:
    """column -> (Kafka Connect type, logical name) for a written schema.

    From a Debezium event with a schema, the types it had (`source_types` holds "type name");
    otherwise built from `column_types`.
    """
    source_types = (event.get("source_types") or {}) if same else {}
    types = event.get("column_types") or {}
    numbers = E.json_numbers(event) or set()
    images = [i for i in (event.get("before"), event.get("after")) if i]
    out: dict[str, tuple[str, str | None]] = {}
    for column in dict.fromkeys([*types, *(event.get("before") or {}), *(event.get("after") or {}), *source_types]):
        if column in source_types:
            kind, _, name = source_types[column].partition(" ")
            out[column] = (kind, name or None)
            continue
        logical = types.get(column, "UNKNOWN")
        values = [i[column] for i in images if i.get(column) is not None]
        if logical in _TEMPORAL_NAMES:
            out[column] = ("int64", _temporal_name(logical, values))
        elif logical in CONNECT_SCHEMA_TYPES:
            out[column] = CONNECT_SCHEMA_TYPES[logical]
        elif column in numbers and values:
            out[column] = ("int64" if all(re.fullmatch(r"-?[0-9]+", v) for v in values) else "float64", None)
        else:
            out[column] = ("string", None)
    return out


def _connect_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "int64" if isinstance(value, int | orjson.Fragment) else "string"


def _struct(name: str, fields: list[dict], optional: bool) -> dict:
    return {"type": "struct", "fields": fields, "optional": optional, "field": name}


def _connect_schema(columns: Mapping[str, tuple[str, str | None]], payload: dict) -> dict:
    row = [
        {"type": kind, "optional": True, "field": column, **({"name": name} if name else {})}
        for column, (kind, name) in columns.items()
    ]
    fields = [_struct("before", row, True), _struct("after", row, True)]
    for key in ("source", "transaction"):
        if isinstance(payload.get(key), dict):
            block = [{"type": _connect_type(v), "optional": True, "field": k} for k, v in payload[key].items()]
            fields.append(_struct(key, block, key == "transaction"))
    fields.append({"type": "string", "optional": False, "field": "op"})
    fields += [{"type": "int64", "optional": True, "field": k} for k in ("ts_ms", "ts_us", "ts_ns") if k in payload]
    return {"type": "struct", "fields": fields, "optional": False}


def _source_block(event: dict, same: bool) -> dict:
    if same:
        return {k: _plain_field(k, v) for k, v in E.meta_of(event, "source.").items()}
    source = {"version": "", "connector": "OB_MYSQL", "name": "OMS", "ts_ms": E.epoch_millis(event.get("event_time"))}
    source |= {"db": event.get("db"), "table": event.get("table_name")}
    source |= {"schema": event.get("db_schema"), "pos": event.get("position")}
    return {k: v for k, v in source.items() if v is not None or k in ("db", "table")}  # db and table even if null


def _encode_debezium(event: dict, options: Mapping[str, str], flatten: bool) -> list:
    same = E.from_same_family(event, *DEBEZIUM_FAMILY)
    if same and OPS.get(event.get("raw_op") or "") == event["op"]:
        op = event["raw_op"]
    elif event["op"] in ENCODE_OPS:
        op = ENCODE_OPS[event["op"]]
    else:
        raise E.Unsupported(f"Debezium has no {event['op']} event")
    E.require_table(event)
    meta = event.get("meta") or {}
    schema_option = options.get("schema", "auto")
    with_schema = not flatten and (
        schema_option == "true" or (schema_option == "auto" and same and meta.get(meta_keys.SCHEMA) == "true")
    )
    columns = _written_columns(event, same) if with_schema else {}
    values = _Values(event, options, columns)
    is_row = event["op"] in C.ROW_OPS
    payload: dict = {
        "before": values.image(event.get("before")) if is_row else None,
        "after": values.image(event.get("after")) if is_row else None,
        "source": _source_block(event, same),
        "op": op,
    }
    if same:
        payload |= {k: _plain_field(k, meta[k]) for k in ("ts_ms", "ts_us", "ts_ns") if k in meta}
        transaction = {k: _plain_field(k, v) for k, v in E.meta_of(event, "transaction.").items()}
    else:
        millis = E.epoch_millis(event.get("sync_time"))
        if millis is not None:
            payload["ts_ms"] = millis
        transaction = {"id": event["tx_id"]} if event.get("tx_id") is not None else {}
    if transaction:
        payload["transaction"] = transaction
    if not flatten:
        payload = ({"schema": _connect_schema(columns, payload)} if with_schema else {}) | {"payload": payload}
    return [E.dumps(payload)]


@lru_cache(maxsize=64)
def smt_add_fields(spec: str) -> tuple[str, ...]:
    """`op,table` -> ("op", "table"): the `add_fields` option; OptionError for a field the SMT has not."""
    add = tuple(f.strip() for f in spec.split(",") if f.strip())
    unknown = sorted(set(add) - set(SMT_ADD_FIELDS))
    if unknown:
        raise OptionError(f"add_fields {', '.join(unknown)} not one of {', '.join(SMT_ADD_FIELDS)}")
    return add


def _smt_field(event: dict, name: str):
    millis = {"ts_ms": "sync_time", "source.ts_ms": "event_time"}
    if name in millis:
        return E.epoch_millis(event.get(millis[name]))
    if name == "op":
        return ENCODE_OPS.get(event["op"]) if event["op"] != "UPSERT" else None
    return event.get({"table": "table_name", "db": "db", "schema": "db_schema"}[name])


def encode_debezium_smt(event: dict, options: Mapping[str, str]) -> list:
    """The flattened row plus `__deleted` (and the `add_fields` Debezium's SMT can add: `__op`, ...)."""
    op = event["op"]
    if op not in C.ROW_OPS:
        raise E.Unsupported(f"DebeziumSmt carries row changes only, not {op}")
    image = event.get("before") if op == "DELETE" else event.get("after")
    if not image:
        raise E.Unsupported("DebeziumSmt cannot carry a row without columns")
    clashes = sorted(k for k in image if re.fullmatch(SMT_FIELDS, k))
    if clashes:
        raise E.Unsupported(f"column(s) {', '.join(clashes)} clash with DebeziumSmt's own fields")
    add = smt_add_fields(options.get("add_fields", ""))
    row = _Values(event, options, {}).image(image)
    if E.from_same_family(event, "oms-debezium-smt"):
        extra = {k: _plain_field(k, v) for k, v in E.meta_of(event).items()}
    else:
        extra = {"__deleted": "true" if op == "DELETE" else "false"}
    for name in add:
        key = "__" + name.replace(".", "_")
        value = _smt_field(event, name)
        if key not in extra and value is not None:
            extra[key] = value
    return [E.dumps(row | extra)]


OPTIONS = (
    binary_option("base16", "base16 (OMS), base64 (standard Debezium) or latin1"),
    Option(
        "column_types",
        "",
        "logical types of columns no Connect schema types, as c22:DATE,c23:TIME",
        check=parse_column_types,
    ),
)
SCHEMA_OPTION = Option(
    "schema",
    "auto",
    "whether the encoder writes the Connect `schema`: true, false, or auto (as the source had it)",
    choices=("auto", "true", "false"),
)
SMT_OPTIONS = (
    *OPTIONS,
    Option("db", "", "the database of messages without `__db`"),
    Option("table", "", "the table of messages without `__table`"),
    Option("add_fields", "", f"the SMT fields the encoder adds, of {', '.join(SMT_ADD_FIELDS)}", check=smt_add_fields),
)
# a connector restarted from its offsets sends a change again with a new envelope time; the source
# position (file/pos/row, lsn, scn) stays part of what identifies it
REPLAYED = ("sync_time", "meta.ts_ms", "meta.ts_us", "meta.ts_ns")


def recognise_debezium(message: dict) -> bool:
    """The Connect envelope: an op with an image or source inside `payload`."""
    payload = message.get("payload")
    return isinstance(payload, dict) and "op" in payload and any(k in payload for k in ("before", "after", "source"))


def recognise_debezium_flatten(message: dict) -> bool:
    """The envelope's fields at the top level (no `payload` wrapper)."""
    return "op" in message and ("before" in message or "after" in message) and "source" in message


def recognise_debezium_smt(message: dict) -> bool:
    """Only the row is left after ExtractNewRecordState; its `__deleted` is the one sure mark, so
    every other format is tried first."""
    return "__deleted" in message


OMS_DEBEZIUM = Codec(
    "oms-debezium",
    decode_debezium,
    partial(_encode_debezium, flatten=False),
    options=(*OPTIONS, SCHEMA_OPTION),
    binary="base16",
    update_has_before=False,
    delivery_fields=REPLAYED,
    event_time_unit="ms",
    names_pk=False,
    description="Debezium JSON (OMS)",
    recognise=recognise_debezium,
)
OMS_DEBEZIUM_FLATTEN = replace(
    OMS_DEBEZIUM, format_id="oms-debezium-flatten", encode=partial(_encode_debezium, flatten=True), options=OPTIONS,
    description="DebeziumFlatten JSON (OMS)", recognise=recognise_debezium_flatten,
)  # fmt: skip
OMS_DEBEZIUM_SMT = replace(
    OMS_DEBEZIUM, format_id="oms-debezium-smt", decode=decode_debezium_smt, encode=encode_debezium_smt,
    options=SMT_OPTIONS, description="DebeziumSmt JSON (OMS)", recognise=recognise_debezium_smt,
    event_time_required=False,  # only where the SMT adds `__source_ts_ms`
)  # fmt: skip
