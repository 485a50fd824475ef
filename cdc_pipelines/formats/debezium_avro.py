"""Debezium Avro with a Confluent-compatible schema registry (`debezium-avro-confluent`, Flink's name).

A message is Confluent's wire format: byte 0 the magic 0, bytes 1-4 the writer schema's id (big-endian),
then the Avro binary of Debezium's envelope written with that schema (`registry.writer_schema`, cached
per process). Messages come as the binary values of Kafka records: a `{"value_b64": ...}` payload, as
the Kafka reader and a kcat `-J` extract of a binary topic give it (see `dts_avro`).

Decoding reads the record, turns each value into what Debezium's JSON converter writes for it (the
`VALUES` table below, by Avro type and Connect logical name) and hands the envelope to the JSON
decoder's `debezium.envelope_event` with the types of the writer schema, as a JSON message's Connect
`schema` would give them: every rule (ops, times, units, meta) is the JSON decoder's own, so a change
gives the rows `oms-debezium` gives for it in JSON with its schema (`binary=base64`, decimals as
numbers: `decimal.format=NUMERIC`).

Encoding writes the event as `oms-debezium` writes it with its schema, then turns the Connect schema into
an Avro one (registered under `subject`, default `<topic>-value`) and the JSON values into Avro ones;
the message is the framed record (a target's files hold it as a `{"value_b64": ...}` line).
"""

from __future__ import annotations

import base64
import binascii
import decimal
import io
import re
import struct
from collections.abc import Callable, Mapping
from functools import lru_cache

import fastavro
import numpy as np

from cdc_pipelines.formats import debezium as D
from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats import registry as R
from cdc_pipelines.formats.base import LONGS, NOT_JSON_OBJECT, Codec, Option, RawEvent, Reject
from cdc_pipelines.model import canonical as C

FORMAT_ID = "debezium-avro-confluent"
MAGIC = 0
FRAME = struct.Struct(">bI")
SUBJECT = "subject"
# Avro type -> Kafka Connect type, where the schema has no `connect.type` (int8, int16)
CONNECT_TYPES = {
    "int": "int32", "long": "int64", "float": "float32", "double": "float64", "boolean": "boolean",
    "string": "string", "bytes": "bytes", "record": "struct", "array": "array", "map": "map", "enum": "string",
    "fixed": "bytes",
}  # fmt: skip
# Kafka Connect type -> the Avro type of its values (the primitive ones)
_PRIMITIVE = ("int", "long", "float", "double", "boolean", "string", "bytes")
AVRO_TYPES = {c: a for a, c in CONNECT_TYPES.items() if a in _PRIMITIVE} | {"int8": "int", "int16": "int"}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
DECIMAL_PRECISION = 64  # Confluent's AvroData default (`connect.decimal.precision`)
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Convert = Callable[[object], object]


def _float32(value: float) -> J.NumberText | str:
    return J.NumberText(str(np.float32(value))) if np.isfinite(value) else str(np.float32(value))


def _float64(value: float) -> J.NumberText | str:
    return J.NumberText(repr(value)) if np.isfinite(value) else repr(value)


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _same(value: object) -> object:
    return value


# what Debezium's JSON converter writes for a value of each Avro type (the value as fastavro reads it
# without logical types); a Connect Decimal by its scale, records field by field
VALUES: dict[str, Convert] = {
    "int": _same, "long": _same, "boolean": _same, "string": _same, "enum": _same,
    "float": _float32, "double": _float64, "bytes": _b64, "fixed": _b64,
}  # fmt: skip


def _without_logical_types(schema):
    """The schema with every `logicalType` left out: fastavro then reads Connect's plain values (the
    days, the unscaled bytes), converted here by their `connect.name` as the JSON decoder converts them."""
    if isinstance(schema, dict):
        return {k: _without_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_without_logical_types(s) for s in schema]
    return schema


class _Schema:
    """A writer schema read once: the converter of each envelope field and the Connect (field, type,
    name) of each image column, for `debezium.schema_info_of`."""

    def __init__(self, schema: dict):
        self.named: dict[str, dict] = {}
        self.records: dict[int, Convert] = {}
        if not isinstance(schema, dict) or schema.get("type") != "record":
            raise Reject("the writer schema is no Avro record: no Debezium envelope")
        self.fields = {f["name"]: self.converter(f["type"], schema.get("namespace")) for f in schema["fields"]}
        self.columns: list[tuple[str, str | None, str | None]] = []
        for image in D.IMAGE_FIELDS:
            record = self.record_of(next((f["type"] for f in schema["fields"] if f["name"] == image), None))
            for column in (record or {}).get("fields", ()):
                self.columns.append((column["name"], *self.connect(column["type"])))
        self.parsed = fastavro.parse_schema(_without_logical_types(schema))

    def resolve(self, schema):
        """A schema with named references looked up and a union with null taken as its other branch."""
        if isinstance(schema, list):
            branches = [s for s in schema if s != "null"]
            return self.resolve(branches[0]) if len(branches) == 1 else schema
        return self.named.get(schema, schema) if isinstance(schema, str) else schema

    def record_of(self, schema):
        resolved = self.resolve(schema)
        return resolved if isinstance(resolved, dict) and resolved.get("type") == "record" else None

    def connect(self, schema) -> tuple[str | None, str | None]:
        """(Connect type, Connect name) of a column's schema."""
        resolved = self.resolve(schema)
        if isinstance(resolved, str):
            return CONNECT_TYPES.get(resolved, resolved), None
        if isinstance(resolved, list):
            return None, None
        kind = resolved.get("connect.type") or CONNECT_TYPES.get(resolved.get("type"), resolved.get("type"))
        return kind, resolved.get("connect.name")

    def converter(self, schema, namespace: str | None) -> Convert:
        """The JSON converter's value of one value read by fastavro with `schema`."""
        if isinstance(schema, list):
            branches = [self.converter(s, namespace) for s in schema if s != "null"]
            if len(branches) == 1:
                return branches[0]
            return lambda value: value  # a union of several types: fastavro's value as read
        if isinstance(schema, str):
            if schema in VALUES:
                return VALUES[schema]
            named = self.named.get(schema) or self.named.get(f"{namespace}.{schema}")
            return (lambda value: self.records[id(named)](value)) if named else _same
        kind = schema.get("type")
        if schema.get("connect.name") == DECIMAL and kind == "bytes":
            scale = int(schema.get("scale", (schema.get("connect.parameters") or {}).get("scale", 0)))
            # as the JSON converter writes it (`decimal.format=NUMERIC`): BigDecimal(unscaled, scale)'s digits
            return lambda value: J.NumberText(C.scaled_decimal_text(int.from_bytes(value, "big", signed=True), scale))
        if kind == "record":
            space = schema.get("namespace", namespace)
            full = schema["name"] if "." in schema["name"] or not space else f"{space}.{schema['name']}"
            self.named[full] = self.named[schema["name"]] = schema
            fields = [(f["name"], self.converter(f["type"], space)) for f in schema["fields"]]
            self.records[id(schema)] = convert = _record(fields)
            return convert
        if kind == "array":
            item = self.converter(schema["items"], namespace)
            return lambda value: None if value is None else [None if v is None else item(v) for v in value]
        if kind == "map":
            item = self.converter(schema["values"], namespace)
            return lambda value: None if value is None else {k: v if v is None else item(v) for k, v in value.items()}
        if kind in ("enum", "fixed"):
            self.named[schema["name"]] = schema
        return VALUES.get(kind, _same) if isinstance(kind, str) else self.converter(kind, namespace)


def _record(fields: list[tuple[str, Convert]]) -> Convert:
    def convert(value):
        if value is None:
            return None
        return {name: (None if value.get(name) is None else f(value[name])) for name, f in fields}

    return convert


@lru_cache(maxsize=256)
def _schema_of(options_key: tuple, schema_id: int) -> tuple[_Schema, tuple]:
    read = _Schema(R.writer_schema(dict(options_key), schema_id)[0])
    return read, D.schema_info_of(tuple(read.columns))


def read_frame(value: bytes, options: Mapping[str, str]) -> tuple[dict, tuple]:
    """(the record as the JSON converter writes it, its schema info) of one framed value."""
    if len(value) < FRAME.size or value[0] != MAGIC:
        raise Reject("not the Confluent wire format (magic byte 0 and a 4-byte schema id)")
    schema_id = int.from_bytes(value[1:5], "big")
    registry = tuple(sorted((k, options.get(k, "")) for k in (R.URL, R.USER_INFO, R.TOKEN)))
    read, info = _schema_of(registry, schema_id)
    buf = io.BytesIO(value[5:])
    try:
        record = fastavro.schemaless_reader(buf, read.parsed, None)
    except Exception as exc:  # noqa: BLE001 - bytes the writer schema cannot read are a verdict
        raise Reject(f"the record cannot be read with schema id {schema_id}: {type(exc).__name__}: {exc}") from None
    if buf.tell() != len(value) - 5:
        raise Reject(f"the record read with schema id {schema_id} leaves {len(value) - 5 - buf.tell()} bytes unread")
    if not isinstance(record, dict):
        raise Reject(f"schema id {schema_id} is no record: no Debezium envelope")
    return {k: read.fields[k](v) if v is not None else None for k, v in record.items()}, info


def decode_debezium_avro(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """One framed Debezium Avro message (a `value_b64` line) -> its raw event."""
    record, info = read_frame(J.value_b64(message), options)
    for name in ("source", "before", "after", "transaction"):
        if record.get(name) is not None and not isinstance(record[name], dict):
            raise Reject(NOT_JSON_OBJECT)
    envelope = D._Envelope(**{name: record.get(name) for name in D._Envelope.__struct_fields__})
    return D.envelope_event(D.DebeziumMessage(payload=envelope), info, options)


def decode_key(key: str, options: Mapping[str, str]) -> str:
    """A Kafka key (its bytes in base64, as the Kafka reader writes a binary topic's key) as the JSON
    object of its fields (`{"id":1001}`), for `keys_from: kafka`; the text as it is when it is no
    framed Avro record. RegistryError when the registry cannot be reached."""
    try:
        record, _ = read_frame(base64.b64decode(key, validate=True), options)
    except (binascii.Error, ValueError, Reject):
        return key
    return J.dumps_exact(record)


# ---------------------------------------------------------------- encoder


def _avro_name(name: str, what: str) -> str:
    if not _AVRO_NAME.fullmatch(name):
        raise E.Unsupported(f"{what} {name!r} is no Avro name ([A-Za-z_][A-Za-z0-9_]*)")
    return name


def _scale(values: list) -> int:
    digits = {len(str(v).partition(".")[2]) for v in values if v is not None}
    if len(digits) > 1:
        raise E.Unsupported("a Connect Decimal has one scale: a column's values differ in their fraction digits")
    return digits.pop() if digits else 0


def _avro_field(field: dict, values: list, records: dict) -> dict:
    """The Avro schema of one Connect schema field (`values`: the field's values in this message)."""
    kind, name = field["type"], field.get("name")
    if kind == "struct" and name in NAMED_STRUCTS:
        if name in records:
            schema = name
        else:
            records[name] = True
            schema = {"type": "record", "name": name.rpartition(".")[2], "namespace": name.rpartition(".")[0],
                      "fields": NAMED_STRUCTS[name][0], "connect.name": name}  # fmt: skip
    elif kind == "struct":
        record_name = field.get("record") or {"before": "Value", "after": "Value"}.get(
            field.get("field"), (field.get("field") or "S").title()
        )
        if record_name in records:
            schema = record_name
        else:
            inner = []
            for f in field["fields"]:
                column = _avro_name(f["field"], "column")
                inner.append(_avro_field(f, [v.get(column) for v in values if isinstance(v, dict)], records))
            records[record_name] = True
            schema = {"type": "record", "name": record_name, "fields": inner}
    elif name == DECIMAL and kind == "bytes":
        scale = _scale(values)
        schema = {
            "type": "bytes", "scale": scale, "precision": DECIMAL_PRECISION, "connect.version": 1,
            "connect.parameters": {"scale": str(scale)}, "connect.name": name, "logicalType": "decimal",
        }  # fmt: skip
    elif kind in ("int64", "float32", "float64") and not name and not _held(kind, values):
        schema = "string"  # a number no Avro long / float / double holds keeps its digits as text
    elif kind in AVRO_TYPES:
        schema = {"type": AVRO_TYPES[kind]}
        if kind in ("int8", "int16"):
            schema["connect.type"] = kind
        if name:
            schema["connect.name"] = name
        if len(schema) == 1:
            schema = schema["type"]
    else:
        raise E.Unsupported(f"a Connect {kind} field has no Avro schema here")
    if field.get("optional"):
        return {"name": _avro_name(field["field"], "field"), "type": ["null", schema], "default": None}
    return {"name": _avro_name(field["field"], "field"), "type": schema}


def _variable_scale(value) -> dict:
    number = decimal.Decimal(str(value))
    scale = max(0, -number.as_tuple().exponent)
    return {"scale": scale, "value": _unscaled_bytes(number, scale)}


def _geometry(value) -> dict:
    return {"wkb": base64.b64decode(value), "srid": None}


_GEOMETRY_FIELDS = [{"name": "wkb", "type": "bytes"}, {"name": "srid", "type": ["null", "int"], "default": None}]
# the Connect structs a canonical value is written back into: (Avro fields, the datum of the value's text)
NAMED_STRUCTS = {
    VARIABLE_DECIMAL: ([{"name": "scale", "type": "int"}, {"name": "value", "type": "bytes"}], _variable_scale),
    "io.debezium.data.geometry.Geometry": (_GEOMETRY_FIELDS, _geometry),
    "io.debezium.data.geometry.Geography": (_GEOMETRY_FIELDS, _geometry),
    "io.debezium.data.geometry.Point": (
        [{"name": "x", "type": "double"}, {"name": "y", "type": "double"}, *_GEOMETRY_FIELDS],
        None,
    ),
}


def _unscaled_bytes(number: decimal.Decimal, scale: int) -> bytes:
    """The big-endian two's complement bytes of `number` with `scale` fraction digits (a Connect Decimal's)."""
    unscaled = int(number.scaleb(scale, decimal.Context(prec=10**6)))
    return unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)


def _held(kind: str, values: list) -> bool:
    """Whether every value is held digit for digit by the Avro type of Connect's `kind`."""
    if kind == "int64":
        return all(int(value) in LONGS for value in values if value is not None)
    try:
        for value in values:
            if value is not None:
                _binary_float(value, AVRO_TYPES[kind])
    except E.Unsupported:
        return False
    return True


def _binary_float(value, kind: str) -> float:
    """The float32 / double of a FLOAT / DOUBLE value; Unsupported unless its shortest text (what the
    decoder gives back, as Java's Float/Double.toString) is the value: no digit is ever changed."""
    number = float(value)
    if not np.isfinite(number):
        return number
    shortest = str(np.float32(number)) if kind == "float" else repr(number)
    if shortest != str(value):
        raise E.Unsupported(f"an Avro {kind} does not hold {value} digit for digit")
    return float(np.float32(number)) if kind == "float" else number


def _avro_value(schema, value):
    """The Avro datum of a JSON value written by the Debezium encoder, for `schema` (before logical types)."""
    if value is None:
        return None
    if isinstance(schema, list):
        schema = schema[1]
    kind = schema if isinstance(schema, str) else schema["type"]
    if isinstance(schema, dict) and schema.get("connect.name") == DECIMAL:
        return _unscaled_bytes(decimal.Decimal(str(value)), schema["scale"])
    if isinstance(schema, dict) and schema.get("connect.name") in NAMED_STRUCTS:
        to_datum = NAMED_STRUCTS[schema["connect.name"]][1]
        if to_datum is None or isinstance(value, dict):
            raise E.Unsupported(f"a {schema['connect.name']} value is not written back from its text")
        return to_datum(value)
    if kind == "bytes":
        return base64.b64decode(value)
    if kind in ("int", "long"):
        return int(value)
    if kind in ("float", "double"):
        return _binary_float(value, kind)
    if kind == "string":
        return value if isinstance(value, str) else J.text(value)
    return value


def _datum(schema: dict, value: dict, records: dict) -> dict:
    out = {}
    for field in schema["fields"]:
        inner = field["type"][1] if isinstance(field["type"], list) else field["type"]
        if isinstance(inner, str) and inner in records:
            inner = records[inner]
        v = value.get(field["name"])
        if isinstance(inner, dict) and inner.get("type") == "record":
            records.setdefault(inner["name"], inner)
            records.setdefault(f"{inner.get('namespace')}.{inner['name']}", inner)
        if isinstance(inner, dict) and inner.get("type") == "record" and inner.get("connect.name") not in NAMED_STRUCTS:
            out[field["name"]] = None if v is None else _datum(inner, v, records)
        else:
            out[field["name"]] = _avro_value(inner, v)
    return out


def writer_schema_of(event: dict, message: dict) -> dict:
    """The Avro schema of an encoded Debezium JSON message (its Connect `schema`) for `event`'s table."""
    payload, records = message["payload"], {}
    fields = []
    for field in message["schema"]["fields"]:
        # the images share one record schema (`Value`, as Debezium's), with the images' columns: an Avro
        # record has every field, so a column of the table's types that no image has would come back as a
        # null. Images of different columns (an update of the changed columns only) each get their own
        # (`Value` after, `BeforeValue` before); a Decimal's scale is that of the record's values
        if field["field"] in D.IMAGE_FIELDS:
            columns = [set(payload[f]) for f in D.IMAGE_FIELDS if isinstance(payload.get(f), dict)]
            shared = len(columns) < 2 or columns[0] == columns[1]
            values = [payload.get(f) for f in (D.IMAGE_FIELDS if shared else [field["field"]])]
            present = {c for v in values if isinstance(v, dict) for c in v}
            if present:
                field = {**field, "fields": [f for f in field["fields"] if f["field"] in present]}
            if not shared and field["field"] == "before":
                field = {**field, "record": "BeforeValue"}
        else:
            values = [payload.get(field["field"])]
        fields.append(_avro_field(field, values, records))
    namespace = ".".join(re.sub(r"[^A-Za-z0-9_]", "_", p) for p in (event.get("db"), event.get("table_name")) if p)
    schema = {"type": "record", "name": "Envelope", "fields": fields, "connect.name": f"{namespace}.Envelope"}
    if namespace:
        schema["namespace"] = namespace if re.match(r"[A-Za-z_]", namespace) else "_" + namespace
    return schema


def encode_debezium_avro(event: dict, options: Mapping[str, str]) -> list[bytes]:
    """One canonical event as its framed message in Confluent's wire format (a target writes it as a
    `value_b64` line)."""
    written = D._encode_debezium(event, {"schema": "true", "binary": "base64", "column_types": ""}, flatten=False)
    message = J.parse_object(written[0])
    schema = writer_schema_of(event, message)
    subject = options.get(SUBJECT) or f"{event.get('source_topic') or event.get('table_name')}-value"
    schema_id = R.register(options, subject, schema)
    plain = _without_logical_types(schema)
    datum = _datum(plain, message["payload"], {})
    buf = io.BytesIO()
    buf.write(FRAME.pack(MAGIC, schema_id))
    try:
        fastavro.schemaless_writer(buf, fastavro.parse_schema(plain), datum)
    except (ValueError, TypeError, OverflowError) as exc:
        raise E.Unsupported(f"the event does not fit its Avro schema: {exc}") from None
    return [buf.getvalue()]


OPTIONS = (
    Option(R.URL, "", "the schema registry's Confluent API, e.g. http://registry:8081 (Apicurio: .../apis/ccompat/v7)"),
    Option(R.USER_INFO, "", "user:password for HTTP basic authentication to the registry (a secret: ${NAME} reads it)"),
    Option(R.TOKEN, "", "a bearer token for the registry (a secret: ${NAME} reads it from the environment)"),
    Option(SUBJECT, "", "the subject the encoder registers its schemas under (default: <topic>-value)"),
)

DEBEZIUM_AVRO = Codec(
    FORMAT_ID,
    decode_debezium_avro,
    encode_debezium_avro,
    options=OPTIONS,
    update_has_before=False,
    binary_messages=True,  # lines (`value_b64`, kcat) of binary values: no `.avro` containers (messages=json)
    delivery_fields=D.REPLAYED,
    event_time_unit="ms",
    names_pk=False,
    description="Debezium Avro in Confluent's wire format, its schemas in a schema registry",
    decode_key=decode_key,
    preflight=R.check_reachable,
)
