"""DTS Avro `Record` -> canonical fields, in plain Python (no Spark): the part fastavro feeds.

One Kafka message is one schemaless Avro `Record` (seed 003; schema in `schemas/dts_record.avsc`).
Older writers lack the trailing `bornTimestamp`, so a message is read with the full schema and, if
that fails or leaves bytes over, with the older one. `Timestamp.millis` and `DateTime.millis` hold
MICROseconds despite their names. `EmptyObject` NULL is a SQL NULL; NONE means "no value given" and
leaves the column out of the image (listed in `meta[meta_keys.NONE_COLUMNS]`).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import copy
import datetime as dt
import importlib.resources
import io
import json
import re
from functools import cache, lru_cache

import fastavro

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats.base import LONGS
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

# a package resource, so it also reads from the zip executors import the package from on a cluster
SCHEMA_FILE = importlib.resources.files("cdc_pipelines.formats") / "schemas" / "dts_record.avsc"
NAMESPACE = "com.alibaba.dts.formats.avro."
_CANONICAL_NAMES = ("INSERT", "UPDATE", "DELETE", "DDL", "HEARTBEAT")  # operations named as the canonical ops
OPS = {op: op for op in _CANONICAL_NAMES} | {"BEGIN": "TX_BEGIN", "COMMIT": "TX_END", "INIT": "INSERT"}
CHARSETS = {"utf8mb4": "utf-8", "utf8mb3": "utf-8", "utf8": "utf-8", "latin1": "latin-1", "binary": None}


def _inline_first_use(node, types: dict, defined: set):
    """The schema JSON with each named type defined where first used and named afterwards."""
    if isinstance(node, str):
        full = node if "." in node else NAMESPACE + node
        if full in types and full not in defined:
            defined.add(full)
            return _inline_first_use(types[full], types, defined)
        return node
    if isinstance(node, list):
        return [_inline_first_use(n, types, defined) for n in node]
    if isinstance(node, dict):
        if node.get("type") in ("record", "enum") and "name" in node:
            defined.add(
                node["name"]
                if "." in node["name"]
                else node.get("namespace", NAMESPACE.rstrip(".")) + "." + node["name"]
            )
        return {
            k: (_inline_first_use(v, types, defined) if k in ("type", "items", "fields", "values") else v)
            for k, v in node.items()
        }
    return node


@cache
def container_schema(older: bool = False) -> dict:
    """The Record schema as one self-contained JSON (for writing `.avro` container files); `older`:
    the older writers' schema, without `bornTimestamp`."""
    types = json.loads(SCHEMA_FILE.read_text())
    named = {NAMESPACE + t["name"]: t for t in types[:-1]}
    record = copy.deepcopy(types[-1])
    if older:
        record["fields"] = [f for f in record["fields"] if f["name"] != "bornTimestamp"]
    return fastavro.parse_schema(_inline_first_use(record, named, set()))


@cache
def record_schemas() -> tuple[dict, dict]:
    """(current schema, schema without `bornTimestamp`), parsed with their named types."""
    types = json.loads(SCHEMA_FILE.read_text())
    schemas = []
    for drop_born in (False, True):
        named: dict = {}
        for t in types[:-1]:
            fastavro.parse_schema(t, named_schemas=named)
        record = copy.deepcopy(types[-1])
        if drop_born:
            record["fields"] = [f for f in record["fields"] if f["name"] != "bornTimestamp"]
        schemas.append(fastavro.parse_schema(record, named_schemas=named))
    return schemas[0], schemas[1]


def read_record(payload: bytes) -> dict:
    """The Record in one schemaless message, read with the current schema, else the older writers';
    ValueError when it is not one under either."""
    errors = []
    for schema in record_schemas():
        buf = io.BytesIO(payload)
        try:
            record = fastavro.schemaless_reader(buf, schema, return_record_name=True)
        except Exception as exc:  # noqa: BLE001 - any decoding failure means "try the other schema"
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        if buf.tell() == len(payload):
            return record
        errors.append(f"{len(payload) - buf.tell()} bytes left over")
    raise ValueError("not a DTS Avro Record (" + "; ".join(errors) + ")")


@lru_cache(maxsize=4096)
def split_object_name(name: str | None) -> tuple[str | None, str | None, str | None]:
    """`db.table` or `db.schema.table` -> (db, schema, table); `\\u002E` is a literal dot in a name."""
    if not name:
        return None, None, None
    parts = [p.replace("\\u002E", ".") for p in name.split(".")]
    if len(parts) >= 3:
        return parts[0], parts[1], ".".join(parts[2:])
    return (parts[0] if len(parts) == 2 else None), None, parts[-1]


def _fraction(micros: int | None) -> str:
    return "" if micros is None else f".{micros:06d}"


def _datetime_text(v: dict) -> tuple[str, str]:
    y, mo, d, h = v.get("year"), v.get("month"), v.get("day"), v.get("hour")
    if y is not None and mo is not None and d is not None and h is None:
        return f"{y:04d}-{mo:02d}-{d:02d}", "DATE"
    mi, s, micros = v.get("minute"), v.get("second"), v.get("millis")
    if y is None and h is not None:
        return f"{h:02d}:{mi or 0:02d}:{s or 0:02d}{_fraction(micros)}", "TIME"
    if y is not None and mo is None:
        return str(y), "INT"
    return f"{y:04d}-{mo:02d}-{d:02d} {h or 0:02d}:{mi or 0:02d}:{s or 0:02d}{_fraction(micros)}", "DATETIME"


def _text(raw: bytes, charset: str) -> tuple[str, str]:
    encoding = CHARSETS.get(charset.lower(), charset)
    if encoding is None:
        return base64.b64encode(raw).decode(), "BYTES"
    try:
        return codecs.decode(raw, encoding), "STRING"
    except (LookupError, UnicodeDecodeError):
        return base64.b64encode(raw).decode(), "BYTES"


_EPOCH_SECOND = dt.datetime(1970, 1, 1)


def _instant(v: dict) -> str:
    instant = _EPOCH_SECOND + dt.timedelta(seconds=v["timestamp"])
    # isoformat is strftime's text where %Y has 4 digits (years 1000-9999), and faster
    second = instant.isoformat() if instant.year >= 1000 else instant.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{second}.{v['millis']:06d}Z"


def _object(kind: str):
    """A Binary*/Text* member: its bytes in base64 (BYTES), or its text (JSON for a JSON object, else STRING)."""

    def convert(v: dict, _t) -> tuple:
        if kind.startswith("Binary"):
            return base64.b64encode(v["value"]).decode(), "BYTES", f"{kind}:{v['type']}"
        return v["value"], "JSON" if v["type"].upper() == "JSON" else "STRING", f"{kind}:{v['type']}"

    return convert


# union member (short name) -> (value, dataTypeNumber) -> (canonical text, logical type, member as meta names it)
_CONVERTERS = {
    "EmptyObject": lambda v, _t: (None, "UNKNOWN", f"EmptyObject:{v}"),
    "Integer": lambda v, _t: (v["value"], "INT", "Integer"),
    "Decimal": lambda v, _t: (v["value"], "DECIMAL", "Decimal"),
    "Float": lambda v, t: (repr(v["value"]), "FLOAT" if t == 4 else "DOUBLE", "Float"),
    "Character": lambda v, _t: (*_text(v["value"], v["charset"]), f"Character:{v['charset']}"),
    "Timestamp": lambda v, _t: (_instant(v), "TIMESTAMP", "Timestamp"),
    "DateTime": lambda v, _t: (*_datetime_text(v), "DateTime"),
    "TimestampWithTimeZone": lambda v, _t: (
        f"{_datetime_text(v['value'])[0]} {v['timezone']}",
        "ZONED_DATETIME",
        "TimestampWithTimeZone",
    ),
    **{kind: _object(kind) for kind in ("BinaryGeometry", "BinaryObject", "TextGeometry", "TextObject")},
}
_CONVERTERS |= {NAMESPACE + kind: convert for kind, convert in _CONVERTERS.items()}
_NULL = (None, "UNKNOWN", "null")


def convert_value(value, data_type: int | None) -> tuple[str | None, str, str]:
    """(canonical text, logical type, union member) of one image value; text None is SQL NULL."""
    if value is None:
        return _NULL
    name, v = value
    convert = _CONVERTERS.get(name)
    if convert is None:
        raise ValueError(f"unknown DTS Avro value type {name}")
    return convert(v, data_type)


def _image(fields: list[dict], values, types: dict, members: dict, none_columns: list) -> dict | None:
    if values is None or isinstance(values, str):
        return None
    if len(values) != len(fields):
        raise ValueError(f"image has {len(values)} values for {len(fields)} fields")
    image = {}
    for field, value in zip(fields, values, strict=True):
        name = field["name"]
        text, logical, member = convert_value(value, field["dataTypeNumber"])
        if member == "EmptyObject:NONE":
            none_columns.append(name)
            continue
        image[name] = text
        members[name] = member
        if logical != "UNKNOWN" or name not in types:
            types[name] = logical
    return image


@lru_cache(maxsize=4096)
def _pk_columns(info: str | None) -> tuple[str, ...] | None:
    """The key columns a `pk_uk_info` tag names: its PRIMARY key, else its first unique key."""
    if not info:
        return None
    try:
        parsed = json.loads(info)
    except ValueError:
        return None
    if isinstance(parsed, dict) and parsed:
        key = parsed.get("PRIMARY", next(iter(parsed.values())))
        return tuple(str(c) for c in key) if isinstance(key, list) else None
    return None


@lru_cache(maxsize=4096)
def _members_json(members: tuple[tuple[str, str], ...]) -> str:
    return json.dumps(dict(members), sort_keys=True)


def record_to_fields(record: dict) -> dict:
    """The canonical fields of one decoded Record (values as canonical text; meta leaves out what is null)."""
    raw_op = record["operation"]
    fields = record["fields"] if isinstance(record["fields"], list) else []
    types, members, none_columns = {}, {}, []  # filled by the images: column -> logical type, union member
    before = _image(fields, record["beforeImages"], types, members, none_columns)
    after = _image(fields, record["afterImages"], types, members, none_columns)
    name = record["objectName"]
    db, schema, table = split_object_name(name)
    tags = record.get("tags") or {}
    process = record.get("processTimestamps") or []
    source = record["source"]
    meta = {
        "version": str(record["version"]),
        "safeSourcePosition": record["safeSourcePosition"],
        "source.sourceType": source["sourceType"],
        "source.version": source["version"],
    }
    if name is not None:
        meta["objectName"] = name
    meta |= {"tags." + key: value for key, value in tags.items()}
    if "bornTimestamp" in record:
        meta["bornTimestamp"] = str(record["bornTimestamp"])
    if process:
        meta["processTimestamps"] = f"[{', '.join(map(str, process))}]"  # json.dumps of longs, faster
    if members:
        meta[meta_keys.AVRO_VALUE_TYPES] = _members_json(tuple(members.items()))
    if none_columns:
        meta[meta_keys.NONE_COLUMNS] = json.dumps(sorted(set(none_columns)))
    ddl = None
    if raw_op == "DDL":
        ddl = next((x for x in (record["afterImages"], record["beforeImages"]) if isinstance(x, str)), None)
    pk = _pk_columns(tags.get("pk_uk_info"))
    return {
        "raw_op": raw_op,
        "op": OPS.get(raw_op, "OTHER"),
        "db": db,
        "db_schema": schema,
        "table_name": table,
        "event_time": str(record["sourceTimestamp"]),
        "sync_time": str(max(process)) if process else None,
        "tx_id": record["sourceTxid"] or None,
        "seq": str(record["id"]),
        "position": record["sourcePosition"] or None,
        "pk_columns": None if pk is None else list(pk),
        "before": before,
        "after": after,
        "column_types": types or None,
        "source_types": {f["name"]: str(f["dataTypeNumber"]) for f in fields} or None,
        "ddl": ddl,
        "meta": meta,
    }


# ---------------------------------------------------------------- encoder
#
# Canonical values back to union members, by logical type (`_MEMBER_OF_TYPE`; BOOLEAN as Integer 1/0: MySQL
# has no boolean); untyped values as Integer or Decimal where the source wrote a JSON number, else Character;
# SQL NULL as null. An event decoded from DTS Avro names its members in meta `cdc.avro_value_types`, which
# picks the exact member (charset, geometry vs object, EmptyObject NULL, YEAR as DateTime). A column of
# `fields` missing from an image is EmptyObject NONE. Text a member cannot hold is written as Character.

ENCODE_OPS = {op: name for name, op in OPS.items() if name != "INIT"}
OPERATIONS = (
    "INSERT", "UPDATE", "DELETE", "DDL", "BEGIN", "COMMIT", "ROLLBACK", "ABORT", "HEARTBEAT", "CHECKPOINT",
    "COMMAND", "FILL", "FINISH", "CONTROL", "RDB", "NOOP", "INIT",
)  # fmt: skip
# MySQL binlog column type codes (`dataTypeNumber`) by logical type, for events that bring none
MYSQL_TYPE_CODES = {
    "BOOLEAN": 1, "INT": 8, "DECIMAL": 246, "FLOAT": 4, "DOUBLE": 5, "STRING": 253, "BYTES": 252, "DATE": 10,
    "TIME": 19, "DATETIME": 18, "TIMESTAMP": 17, "ZONED_DATETIME": 17, "INTERVAL": 253, "JSON": 245, "UNKNOWN": 253,
}  # fmt: skip
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _member(kind: str, value) -> tuple:
    return NAMESPACE + kind, value


def _digits(text: str) -> tuple[int, int]:
    """(precision, scale) of a decimal text: its digit count and its fraction digit count."""
    mantissa = re.split(r"[eE]", text.lstrip("+-"))[0]
    whole, _, fraction = mantissa.partition(".")
    return len((whole + fraction).lstrip("0")) or 1, len(fraction)


def _character(text: str, charset: str, logical: str):
    """A Character member: BYTES (and a binary charset's text) from base64, other text in its charset."""
    encoding = CHARSETS.get(charset.lower(), charset)
    try:
        if encoding is None or logical == "BYTES":
            raw = base64.b64decode(text, validate=True)
        else:
            raw = codecs.encode(text, encoding)
    except (ValueError, LookupError):  # not base64 (binascii.Error), not in the charset (UnicodeEncodeError)
        return None
    return _member("Character", {"charset": charset, "value": raw})


def _datetime_parts(text: str, logical: str) -> dict | None:
    """DateTime fields of DATE/TIME/DATETIME text, or of a YEAR (INT) value; None if it does not parse."""
    out = dict.fromkeys(("year", "month", "day", "hour", "minute", "second", "millis"))
    if logical == "INT":  # a YEAR column: the year alone
        return out | {"year": int(text)} if re.fullmatch(r"[0-9]{1,4}", text) else None
    parts = E.temporal_parts(text, logical) if logical in ("DATE", "TIME", "DATETIME") else None
    if parts is None:
        return None
    fraction = parts.pop("fraction", "")
    out |= parts
    # microseconds, despite the name
    out["millis"] = int(E.fraction_digits(fraction, 6, text, "DTS Avro DateTime")) if fraction else None
    return out


def _timestamp(text: str):
    instant = C.instant_seconds(text)
    if instant is None:
        return None
    seconds, fraction = instant
    micros = int(E.fraction_digits(fraction, 6, text, "DTS Avro Timestamp"))
    return _member("Timestamp", {"timestamp": seconds, "millis": micros})


def _zoned(text: str):
    local, _, zone = text.rpartition(" ")
    parts = _datetime_parts(local, "DATETIME" if " " in local else "DATE") if zone else None
    return None if parts is None else _member("TimestampWithTimeZone", {"value": parts, "timezone": zone})


def _float(text: str):
    try:
        value = float(text)
    except ValueError:
        return None
    if not E.same_double(text, value):
        raise E.Unsupported(f"DTS Avro Float is a binary double: {text!r} would come back as {value!r}")
    precision, scale = _digits(text) if _DECIMAL.fullmatch(text) else (0, 0)
    return _member("Float", {"value": value, "precision": precision, "scale": scale})


def _by_member(hint: str, text: str, logical: str):
    """The member `hint` (as meta `cdc.avro_value_types` names it) holding `text`, or None."""
    kind, _, arg = hint.partition(":")
    if kind == "Integer" and _INTEGER.fullmatch(text):
        return _member("Integer", {"precision": len(text.lstrip("+-")), "value": text})
    if kind == "Decimal" and _DECIMAL.fullmatch(text):
        precision, scale = _digits(text)
        return _member("Decimal", {"value": text, "precision": precision, "scale": scale})
    if kind == "Float":
        return _float(text)
    if kind == "Character":
        return _character(text, arg or "utf8mb4", logical)
    if kind == "Timestamp":
        return _timestamp(text)
    if kind == "DateTime":
        parts = _datetime_parts(text, logical)
        return None if parts is None else _member("DateTime", parts)
    if kind == "TimestampWithTimeZone":
        return _zoned(text)
    if kind in ("BinaryGeometry", "BinaryObject"):
        try:
            return _member(kind, {"type": arg, "value": base64.b64decode(text, validate=True)})
        except (binascii.Error, ValueError):
            return None
    if kind in ("TextGeometry", "TextObject"):
        return _member(kind, {"type": arg, "value": text})
    return None


_MEMBER_OF_TYPE = {
    "INT": "Integer", "DECIMAL": "Decimal", "FLOAT": "Float", "DOUBLE": "Float", "STRING": "Character:utf8mb4",
    "INTERVAL": "Character:utf8mb4", "BYTES": "BinaryObject:BLOB", "DATE": "DateTime", "TIME": "DateTime",
    "DATETIME": "DateTime", "TIMESTAMP": "Timestamp", "ZONED_DATETIME": "TimestampWithTimeZone",
    "JSON": "TextObject:JSON",
}  # fmt: skip


def encode_value(text: str | None, logical: str, hint: str | None, is_number: bool):
    """The union member for one canonical value (see the notes above); None is SQL NULL."""
    if text is None:
        return _member("EmptyObject", "NULL") if hint == "EmptyObject:NULL" else None
    member = _by_member(hint, text, logical) if hint else None
    if member is None and logical == "BOOLEAN" and text in ("true", "false"):
        member = _by_member("Integer", "1" if text == "true" else "0", "INT")
    if member is None and logical in _MEMBER_OF_TYPE:
        member = _by_member(_MEMBER_OF_TYPE[logical], text, logical)
    if member is None and logical == "UNKNOWN" and is_number:
        member = _by_member("Integer" if _INTEGER.fullmatch(text) else "Decimal", text, logical)
    return member if member is not None else _by_member("Character:utf8mb4", text, "STRING")


def object_name(db: str | None, db_schema: str | None, table: str | None) -> str | None:
    """`db.table` / `db.schema.table`, a dot inside a name written `\\u002E` (the reverse of `split_object_name`)."""
    return ".".join(p.replace(".", "\\u002E") for p in (db, db_schema, table) if p is not None) or None


def _record_id(event: dict) -> int:
    seq = event.get("seq")
    if seq is not None and re.fullmatch(r"-?[0-9]{1,19}", seq) and int(seq) in LONGS:
        return int(seq)
    return int(E.synthetic_sequence(event))  # `id` is a long: a sequence that is no long cannot be it


def _images(event: dict, columns: list[str]) -> tuple[list | None, list | None]:
    types = event.get("column_types") or {}
    hints = E.shared_json((event.get("meta") or {}).get(meta_keys.AVRO_VALUE_TYPES) or "{}")
    numbers = E.json_numbers(event) or set()
    rows = [r for r in (event.get("before"), event.get("after")) if r]
    # an untyped number column whose images hold an integer and a fraction (a DECIMAL `0` and `3752.0`)
    # is one Decimal column: the decoder types a column by its member, the same in both images
    mixed = {
        c: "Decimal"
        for c in numbers
        if c not in hints
        and types.get(c, "UNKNOWN") == "UNKNOWN"
        and any(r.get(c) is not None and not _INTEGER.fullmatch(r[c]) for r in rows)
    }

    def image(row: dict | None) -> list | None:
        if row is None:
            return None
        none = _member("EmptyObject", "NONE")
        return [
            encode_value(row[c], types.get(c, "UNKNOWN"), hints.get(c) or mixed.get(c), c in numbers)
            if c in row
            else none
            for c in columns
        ]

    return image(event.get("before")), image(event.get("after"))


def encode_record(event: dict, options) -> list[bytes]:
    """One canonical event as one schemaless DTS Avro `Record` message."""
    same = E.from_same_family(event, "dts-avro")
    meta = event.get("meta") or {}
    op, raw_op = event["op"], event.get("raw_op")
    if same and raw_op in OPERATIONS and OPS.get(raw_op, "OTHER") == op:
        operation = raw_op
    elif op in ENCODE_OPS:
        operation = ENCODE_OPS[op]
    else:
        raise E.Unsupported(f"DTS Avro has no {op} operation")
    E.require_table(event)
    is_row = op in ("INSERT", "UPDATE", "DELETE")
    source_types = event.get("source_types") or {}
    types = event.get("column_types") or {}
    if same and source_types:
        columns = list(source_types)
    elif is_row:
        columns = list(dict.fromkeys([*(event.get("before") or {}), *(event.get("after") or {})]))
    else:
        columns = []
    codes = {c: int(t) for c, t in source_types.items() if type(t) is str and re.fullmatch(r"-?[0-9]+", t)}
    fields = [{"name": c, "dataTypeNumber": codes.get(c, MYSQL_TYPE_CODES.get(types.get(c), 253))} for c in columns]
    before, after = _images(event, columns) if is_row else (None, None)
    if op == "DDL":
        after = event.get("ddl")
    millis = E.epoch_millis(event.get("event_time"))
    sync = E.epoch_millis(event.get("sync_time"))
    pk = event.get("pk_columns")
    if same:
        tags = E.meta_of(event, "tags.")
        process = json.loads(meta["processTimestamps"]) if meta.get("processTimestamps") else None
        source = {"sourceType": meta.get("source.sourceType", "MySQL"), "version": meta.get("source.version", "")}
        name = meta.get("objectName")
    else:
        tags = {"pk_uk_info": json.dumps({"PRIMARY": pk}, separators=(",", ":"))} if pk else {}
        process = None if sync is None else [sync]
        source = {"sourceType": "MySQL", "version": ""}
        name = object_name(event.get("db"), event.get("db_schema"), event.get("table_name"))
    record = {
        "version": int(meta.get("version", 1)) if same else 1,
        "id": _record_id(event),
        "sourceTimestamp": 0 if millis is None else millis // 1000,
        "sourcePosition": event.get("position") or "",
        "safeSourcePosition": meta.get("safeSourcePosition", "") if same else "",
        "sourceTxid": event.get("tx_id") or "",
        "source": source,
        "operation": operation,
        "objectName": name,
        "processTimestamps": process,
        "tags": tags,
        "fields": fields if fields or is_row else None,
        "beforeImages": before,
        "afterImages": after,
    }
    # an event from an older writer (no bornTimestamp) is written back with that writer's schema
    old_writer = same and "bornTimestamp" not in meta
    if not old_writer:
        record["bornTimestamp"] = int(meta["bornTimestamp"]) if same else (millis or 0)
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, record_schemas()[1 if old_writer else 0], record)
    return [E.OlderSchemaMessage(buf.getvalue()) if old_writer else buf.getvalue()]
