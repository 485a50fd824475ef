"""Debezium JSON as OMS writes it (seed 000): with or without `schema`, flattened, and after the SMT.

Values are converted only where a type is known: from the Kafka Connect schema when the message has
one (logical names such as `io.debezium.time.Date` decide temporal conversions; a bare int32/int64
stays an integer), or from the `column_types` option (`c22:DATE,c23:TIME`), which applies the
OMS encodings of seed 000 (DATE days, TIME micros, DATETIME millis). OMS writes BYTES as base16
(`binary=base16`, the default); standard Debezium writes base64 (`binary=base64`).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from collections.abc import Mapping

import orjson
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats.base import (
    Codec,
    OptionError,
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

_COLUMN = T.StructType(
    [
        T.StructField("field", T.StringType()),
        T.StructField("type", T.StringType()),
        T.StructField("name", T.StringType()),
        T.StructField("parameters", J.TEXT_MAP),
    ]
)
_FIELD = T.StructType(
    [
        T.StructField("field", T.StringType()),
        T.StructField("type", T.StringType()),
        T.StructField("name", T.StringType()),
        T.StructField("fields", T.ArrayType(_COLUMN)),
    ]
)
_ENVELOPE = [
    T.StructField("op", T.StringType()),
    T.StructField("source", J.TEXT_MAP),
    T.StructField("before", J.TEXT_MAP),
    T.StructField("after", J.TEXT_MAP),
    T.StructField("ts_ms", T.StringType()),
    T.StructField("ts_us", T.StringType()),
    T.StructField("ts_ns", T.StringType()),
    T.StructField("transaction", J.TEXT_MAP),
]
SCHEMA = T.StructType(
    [
        T.StructField(
            "schema",
            T.StructType([T.StructField("name", T.StringType()), T.StructField("fields", T.ArrayType(_FIELD))]),
        ),
        T.StructField("payload", T.StructType(_ENVELOPE)),
        *_ENVELOPE,
    ]
)
SMT_SCHEMA = J.TEXT_MAP
OPTIONS = {"binary": "base16", "column_types": ""}


def parse_column_types(spec: str) -> dict[str, str]:
    """`c22:DATE,c23:TIME` -> {"c22": "DATE", "c23": "TIME"} (logical types of DESIGN.md)."""
    out: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, logical = item.rpartition(":")
        if not sep or logical.upper() not in C.LOGICAL_TYPES:
            raise OptionError(
                f"column_types entry {item!r} is not NAME:TYPE with TYPE one of {', '.join(C.LOGICAL_TYPES)}"
            )
        out[name] = logical.upper()
    return out


def _declared(options: Mapping[str, str]) -> tuple[Column, Column]:
    """(types, temporal units) given by the `column_types` option, as map columns (or nulls)."""
    declared = parse_column_types(options.get("column_types", ""))
    if not declared:
        return F.lit(None).cast(J.TEXT_MAP), F.lit(None).cast(J.TEXT_MAP)
    units = {k: C.OMS_DEBEZIUM_TEMPORAL_UNITS[v] for k, v in declared.items() if v in C.OMS_DEBEZIUM_TEMPORAL_UNITS}
    return C.lit_map(declared), (C.lit_map(units) if units else F.lit(None).cast(J.TEXT_MAP))


def _merge(*maps: Column) -> Column:
    """Later maps win; null maps are skipped; all null -> null."""
    parts = [F.coalesce(m, F.create_map().cast(J.TEXT_MAP)) for m in maps]
    merged = F.map_concat(*parts)
    return F.when(F.size(merged) > 0, merged)


def _schema_columns() -> Column:
    fields = msg("schema.fields")
    image = F.filter(fields, lambda f: f["field"].isin("after", "before"))
    return F.flatten(F.transform(image, lambda f: F.coalesce(f["fields"], F.array())))


def decode_debezium(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    def p(name: str) -> Column:
        return F.coalesce(msg("payload." + name), msg(name))

    raw_op = txt(p("op"))
    op = lookup(OPS, raw_op)
    is_row = op.isin(*C.ROW_OPS)
    source = J.image_text(p("source"))
    columns = _schema_columns()
    schema_types = typed_map(
        F.transform(
            columns,
            lambda c: F.struct(
                c["field"], F.coalesce(lookup(C.CONNECT_NAME_TO_LOGICAL, c["name"]), C.logical_type(c["type"]))
            ),
        )
    )
    schema_units = typed_map(
        F.transform(
            F.filter(columns, lambda c: lookup(C.CONNECT_TEMPORAL_UNITS, c["name"]).isNotNull()),
            lambda c: F.struct(c["field"], lookup(C.CONNECT_TEMPORAL_UNITS, c["name"])),
        )
    )
    source_types = typed_map(
        F.transform(columns, lambda c: F.struct(c["field"], F.concat_ws(" ", c["type"], c["name"])))
    )
    declared_types, declared_units = _declared(options)
    event_time, unit = C.epoch_time(F.element_at(source, "ts_ms"), "ms")
    sync_time, _ = C.epoch_time(txt(p("ts_ms")), "ms")
    fields = {
        "op": op,
        "raw_op": raw_op,
        "db": F.element_at(source, "db"),
        "db_schema": F.element_at(source, "schema"),
        "table_name": F.element_at(source, "table"),
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "tx_id": F.coalesce(F.element_at(J.image_text(p("transaction")), "id"), F.element_at(source, "txId")),
        "position": F.coalesce(
            F.concat(F.nullif(F.element_at(source, "file"), F.lit("")), F.lit(":"), F.element_at(source, "pos")),
            F.element_at(source, "pos"),
            F.element_at(source, "gtid"),
            F.element_at(source, "lsn"),
        ),
        "before_raw": F.when(is_row, p("before")),
        "after_raw": F.when(is_row, p("after")),
        "column_types": _merge(schema_types, declared_types),
        "temporal_units": _merge(schema_units, declared_units),
        "source_types": source_types,
        "meta": _merge(
            prefixed(p("source"), "source."),
            prefixed(p("transaction"), "transaction."),
            text_map(
                ("ts_ms", txt(p("ts_ms"))),
                ("ts_us", txt(p("ts_us"))),
                ("ts_ns", txt(p("ts_ns"))),
                ("cdc.schema", F.when(msg("schema").isNotNull(), F.lit("true"))),
            ),
        ),
    }
    reason = first_reason(
        (raw_op.isNull(), "missing op"),
        (op.isNull(), unknown_op_reason("op", raw_op)),
    )
    return emit(df, fields, reason)


def decode_debezium_smt(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    message = F.col("msg")
    row = F.map_filter(message, lambda k, _v: ~k.rlike(SMT_FIELDS))
    extra = F.map_filter(message, lambda k, _v: k.rlike(SMT_FIELDS))
    deleted = F.lower(txt(F.element_at(message, "__deleted")))
    smt_op = txt(F.element_at(message, "__op"))
    op = (
        F.when(deleted == "true", "DELETE")
        .when(smt_op.isNotNull(), lookup(SMT_OPS, smt_op))
        .when(deleted == "false", "UPSERT")
    )
    declared_types, declared_units = _declared(options)
    event_time, unit = C.epoch_time(txt(F.element_at(message, "__source_ts_ms")), "ms")
    fields = {
        "op": op,
        "raw_op": F.coalesce(smt_op, F.concat(F.lit("__deleted="), deleted)),
        "db": F.coalesce(txt(F.element_at(message, "__db")), F.lit(options.get("db") or None)),
        "table_name": F.coalesce(txt(F.element_at(message, "__table")), F.lit(options.get("table") or None)),
        "event_time": event_time,
        "event_time_unit": unit,
        "before_raw": F.when(op == "DELETE", row),
        "after_raw": F.when(op != "DELETE", row),
        "column_types": declared_types,
        "temporal_units": declared_units,
        "meta": J.image_text(extra),
    }
    reason = first_reason(
        (deleted.isNull() & smt_op.isNull(), "missing __deleted"),
        (op.isNull(), F.concat(F.lit("unknown __deleted/__op value '"), F.coalesce(smt_op, deleted), F.lit("'"))),
        (F.size(row) == 0, "no row columns"),
    )
    return emit(df, fields, reason)


# ---------------------------------------------------------------- encoders
#
# What they write (seed 000 Debezium type table): op c/u/d/HEARTBEAT (`r` and `t` kept where the
# event came from Debezium), BYTES as base16 (option `binary`), DATE as days, TIME as micros and
# DATETIME as millis since the epoch where the column is typed, TIMESTAMP as the ISO string. With a
# schema (oms-debezium, option `schema`), each column gets a Kafka Connect type and, for temporal
# columns, the Debezium logical name whose unit keeps the value's fraction digits, so the decoder
# converts the integers back without a `column_types` option.

ENCODE_OPS = {"INSERT": "c", "UPDATE": "u", "DELETE": "d", "HEARTBEAT": "HEARTBEAT", "TRUNCATE": "t"}
DEBEZIUM_FAMILY = ("oms-debezium", "oms-debezium-flatten")
VALUE_FAMILY = (*DEBEZIUM_FAMILY, "oms-debezium-smt")
SCHEMA_CHOICES = ("auto", "true", "false")
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
    if logical == "DATE":
        return (dt.date(parts["year"], parts["month"], parts["day"]) - _EPOCH_DAY).days if unit == "days" else None
    per = _PER_SECOND.get(unit)
    if per is None:
        return None
    clock = parts["hour"] * 3600 + parts["minute"] * 60 + parts["second"]
    if logical == "TIME":
        if clock >= 86400:
            return None
        seconds = clock
    else:
        seconds = (dt.date(parts["year"], parts["month"], parts["day"]) - _EPOCH_DAY).days * 86400 + clock
    digits = len(str(per)) - 1
    return seconds * per + int(E.fraction_digits(parts["fraction"], digits, value, f"Debezium {unit}") or 0)


def _temporal_name(logical: str, values: list[str]) -> str:
    """The Debezium logical name for a TIME/DATETIME column whose unit holds every fraction digit."""
    longest = max((len((E.temporal_parts(v, logical) or {}).get("fraction", "")) for v in values), default=0)
    return next(name for digits, name in _TEMPORAL_NAMES[logical] if longest <= digits or digits == 9)


def encode_bytes(value: str, binary: str) -> str:
    """Canonical base64 BYTES as the target writes them: base16 (upper case), base64 or latin-1 text."""
    if binary == "base64":
        return value
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex().upper() if binary == "base16" else raw.decode("latin-1")


class _Values:
    """Writes one event's image values the Debezium way (see the module notes above).

    From a Debezium-family event the JSON number-or-string choice is the one the source made
    (`cdc.json_numbers`); otherwise INT/FLOAT/DOUBLE (and untyped values the source wrote as
    numbers) are numbers, DECIMAL a string (OMS: "STRING ... in full"), BOOLEAN true/false.
    """

    def __init__(self, event: dict, units: Mapping[str, str | None], binary: str):
        self.types = event.get("column_types") or {}
        self.units = units
        self.binary = binary
        self.same = E.from_same_family(event, *VALUE_FAMILY)
        self.numbers = E.json_numbers(event) or set()

    def value(self, column: str, text: str | None):
        if text is None:
            return None
        logical = self.types.get(column, "UNKNOWN")
        as_number = column in self.numbers
        if logical == "BYTES":
            return encode_bytes(text, self.binary)
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


def _columns(event: dict) -> list[str]:
    keys = [*(event.get("column_types") or {}), *(event.get("before") or {}), *(event.get("after") or {})]
    return list(dict.fromkeys(keys))


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
    for column in _columns(event) + [c for c in source_types if c not in types]:
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
    source = {"version": "", "connector": "OB_MYSQL", "name": "OMS"}
    millis = E.epoch_millis(event.get("event_time"))
    if millis is not None:
        source["ts_ms"] = millis
    source |= {"db": event.get("db"), "table": event.get("table_name")}
    if event.get("db_schema") is not None:
        source["schema"] = event["db_schema"]
    if event.get("position") is not None:
        source["pos"] = event["position"]
    return source


def _op_letter(event: dict, same: bool) -> str:
    if same and OPS.get(event.get("raw_op") or "") == event["op"]:
        return event["raw_op"]
    if event["op"] not in ENCODE_OPS:
        raise E.Unsupported(f"Debezium has no {event['op']} event")
    return ENCODE_OPS[event["op"]]


def _encode_debezium(flatten: bool):
    def encode(event: dict, options: Mapping[str, str]) -> list:
        same = E.from_same_family(event, *DEBEZIUM_FAMILY)
        op = _op_letter(event, same)
        E.require_table(event)
        meta = event.get("meta") or {}
        schema_option = options.get("schema", "auto")
        if schema_option not in SCHEMA_CHOICES:
            raise ValueError(f"option schema={schema_option!r} must be one of {', '.join(SCHEMA_CHOICES)}")
        with_schema = not flatten and (
            schema_option == "true" or (schema_option == "auto" and same and meta.get("cdc.schema") == "true")
        )
        columns = _written_columns(event, same) if with_schema else {}
        # the unit a schema's logical name gives, else the OMS unit of the column's type (seed 000)
        types = event.get("column_types") or {}
        units = {c: C.OMS_DEBEZIUM_TEMPORAL_UNITS.get(t) for c, t in types.items()}
        named = C.CONNECT_TEMPORAL_UNITS
        units |= {c: named[name] for c, (_, name) in columns.items() if name in named}
        values = _Values(event, units, options.get("binary", "base16"))
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
        if flatten:
            return [E.dumps(payload)]
        if with_schema:
            return [E.dumps({"schema": _connect_schema(columns, payload), "payload": payload})]
        return [E.dumps({"payload": payload})]

    return encode


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
    add = [f.strip() for f in options.get("add_fields", "").split(",") if f.strip()]
    unknown = sorted(set(add) - set(SMT_ADD_FIELDS))
    if unknown:
        raise ValueError(f"add_fields {', '.join(unknown)} not one of {', '.join(SMT_ADD_FIELDS)}")
    types = event.get("column_types") or {}
    units = {c: C.OMS_DEBEZIUM_TEMPORAL_UNITS.get(t) for c, t in types.items()}
    row = _Values(event, units, options.get("binary", "base16")).image(image)
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


_SMT_OPTIONS = {**OPTIONS, "db": "", "table": "", "add_fields": ""}
OMS_DEBEZIUM = Codec(
    "oms-debezium",
    SCHEMA,
    decode_debezium,
    options={**OPTIONS, "schema": "auto"},
    binary="base16",
    update_has_before=False,
    encode=_encode_debezium(flatten=False),
    description="Debezium JSON (OMS)",
)
OMS_DEBEZIUM_FLATTEN = Codec(
    "oms-debezium-flatten",
    SCHEMA,
    decode_debezium,
    options=OPTIONS,
    binary="base16",
    update_has_before=False,
    encode=_encode_debezium(flatten=True),
    description="DebeziumFlatten JSON (OMS)",
)
OMS_DEBEZIUM_SMT = Codec(
    "oms-debezium-smt",
    SMT_SCHEMA,
    decode_debezium_smt,
    options=_SMT_OPTIONS,
    binary="base16",
    update_has_before=False,
    encode=encode_debezium_smt,
    description="DebeziumSmt JSON (OMS)",
)
