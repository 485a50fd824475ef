"""DTS Avro `Record` -> canonical fields, in plain Python (no Spark): the part fastavro feeds.

One Kafka message is one schemaless Avro `Record` (seed 003; schema in `schemas/dts_record.avsc`).
Older writers lack the trailing `bornTimestamp`, so a message is read with the full schema and, if
that fails or leaves bytes over, with the older one. `Timestamp.millis` and `DateTime.millis` hold
MICROseconds despite their names. `EmptyObject` NULL is a SQL NULL; NONE means "no value given" and
leaves the column out of the image (listed in `meta["cdc.none_columns"]`).
"""

from __future__ import annotations

import base64
import codecs
import copy
import datetime as dt
import io
import json
from functools import cache
from pathlib import Path

import fastavro

SCHEMA_FILE = Path(__file__).parent / "schemas" / "dts_record.avsc"
NAMESPACE = "com.alibaba.dts.formats.avro."
OPS = {
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "DDL": "DDL",
    "HEARTBEAT": "HEARTBEAT",
    "BEGIN": "TX_BEGIN",
    "COMMIT": "TX_END",
    "INIT": "INSERT",
}
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
def container_schema() -> dict:
    """The Record schema as one self-contained JSON (for writing `.avro` container files)."""
    types = json.loads(SCHEMA_FILE.read_text())
    named = {NAMESPACE + t["name"]: t for t in types[:-1]}
    return fastavro.parse_schema(_inline_first_use(types[-1], named, set()))


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
    """The Record in one schemaless message; ValueError when it is not one under either schema."""
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


def split_object_name(name: str | None) -> tuple[str | None, str | None, str | None]:
    """`db.table` or `db.schema.table` -> (db, schema, table); `\\u002E` is a literal dot in a name."""
    if not name:
        return None, None, None
    parts = [p.replace("\\u002E", ".") for p in name.split(".")]
    if len(parts) >= 3:
        return parts[0], parts[1], ".".join(parts[2:])
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return None, None, parts[0]


def _fraction(micros: int | None) -> str:
    return "" if micros is None else f".{micros:06d}"


def _datetime_text(v: dict) -> tuple[str, str]:
    y, mo, d, h, mi, s = (v.get(k) for k in ("year", "month", "day", "hour", "minute", "second"))
    micros = v.get("millis")
    if y is not None and mo is not None and d is not None and h is None:
        return f"{y:04d}-{mo:02d}-{d:02d}", "DATE"
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


def convert_value(value, data_type: int | None) -> tuple[str | None, str, str]:
    """(canonical text, logical type, union member) of one image value; text None is SQL NULL."""
    if value is None:
        return None, "UNKNOWN", "null"
    name, v = value
    kind = name.removeprefix(NAMESPACE)
    if kind == "EmptyObject":
        return None, "UNKNOWN", f"EmptyObject:{v}"
    if kind == "Integer":
        return v["value"], "INT", kind
    if kind == "Decimal":
        return v["value"], "DECIMAL", kind
    if kind == "Float":
        return repr(v["value"]), ("FLOAT" if data_type == 4 else "DOUBLE"), kind
    if kind == "Character":
        text, logical = _text(v["value"], v["charset"])
        return text, logical, f"Character:{v['charset']}"
    if kind == "Timestamp":
        instant = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=v["timestamp"])
        return instant.strftime("%Y-%m-%dT%H:%M:%S") + f".{v['millis']:06d}Z", "TIMESTAMP", kind
    if kind == "DateTime":
        text, logical = _datetime_text(v)
        return text, logical, kind
    if kind == "TimestampWithTimeZone":
        text, _ = _datetime_text(v["value"])
        return f"{text} {v['timezone']}", "ZONED_DATETIME", kind
    if kind in ("BinaryGeometry", "BinaryObject"):
        return base64.b64encode(v["value"]).decode(), "BYTES", f"{kind}:{v['type']}"
    if kind in ("TextGeometry", "TextObject"):
        logical = "JSON" if v["type"].upper() == "JSON" else "STRING"
        return v["value"], logical, f"{kind}:{v['type']}"
    raise ValueError(f"unknown DTS Avro value type {name}")


def _image(fields: list[dict], values, types: dict, members: dict, none_columns: list) -> dict | None:
    if values is None or isinstance(values, str):
        return None
    if len(values) != len(fields):
        raise ValueError(f"image has {len(values)} values for {len(fields)} fields")
    image = {}
    for field, value in zip(fields, values, strict=True):
        text, logical, member = convert_value(value, field["dataTypeNumber"])
        if member == "EmptyObject:NONE":
            none_columns.append(field["name"])
            continue
        image[field["name"]] = text
        members[field["name"]] = member
        if logical != "UNKNOWN" or field["name"] not in types:
            types[field["name"]] = logical
    return image


def _pk_columns(tags: dict) -> list[str] | None:
    info = tags.get("pk_uk_info")
    if not info:
        return None
    try:
        parsed = json.loads(info)
    except ValueError:
        return None
    if isinstance(parsed, dict) and parsed:
        key = parsed.get("PRIMARY", next(iter(parsed.values())))
        return [str(c) for c in key] if isinstance(key, list) else None
    return None


def record_to_fields(record: dict) -> dict:
    """The canonical fields of one decoded Record (values as canonical text)."""
    raw_op = record["operation"]
    fields = record["fields"] if isinstance(record["fields"], list) else []
    types: dict = {}
    members: dict = {}
    none_columns: list = []
    before = _image(fields, record["beforeImages"], types, members, none_columns)
    after = _image(fields, record["afterImages"], types, members, none_columns)
    db, schema, table = split_object_name(record["objectName"])
    tags = record.get("tags") or {}
    process = record.get("processTimestamps") or []
    meta = {
        "version": str(record["version"]),
        "safeSourcePosition": record["safeSourcePosition"],
        "source.sourceType": record["source"]["sourceType"],
        "source.version": record["source"]["version"],
        "objectName": record["objectName"],
        **{f"tags.{k}": v for k, v in tags.items()},
    }
    if "bornTimestamp" in record:
        meta["bornTimestamp"] = str(record["bornTimestamp"])
    if process:
        meta["processTimestamps"] = json.dumps(process)
    if members:
        meta["cdc.avro_value_types"] = json.dumps(members, sort_keys=True)
    if none_columns:
        meta["cdc.none_columns"] = json.dumps(sorted(set(none_columns)))
    ddl = None
    if raw_op == "DDL":
        ddl = next((x for x in (record["afterImages"], record["beforeImages"]) if isinstance(x, str)), None)
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
        "pk_columns": _pk_columns(tags),
        "before": before,
        "after": after,
        "column_types": types or None,
        "source_types": {f["name"]: str(f["dataTypeNumber"]) for f in fields} or None,
        "ddl": ddl,
        "meta": meta,
    }


def decode_message(payload: bytes) -> dict:
    """`record_to_fields` of one schemaless message, or {"error": reason}."""
    try:
        return record_to_fields(read_record(payload))
    except (ValueError, KeyError, TypeError) as exc:
        return {"error": str(exc)}
