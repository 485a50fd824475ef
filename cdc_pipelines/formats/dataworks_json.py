"""DataWorks Kafka JSON (seed 002) and the DataHub BLOB payload (seed 004), versions 0.0.1 and 1.0.0.

`schema.dataColumn` types are DataWorks' six: BOOLEAN, DOUBLE, DATE (a 13-digit epoch-millis
instant, so canonical TIMESTAMP), BYTES (base64), LONG, STRING. An update comes either split
(UPDATE_BEFOR then UPDATE_AFTER sharing `sequenceId`, paired in `split_update`) or merged (one
UPDATE_AFTER with both images). `ddl.ddlMeta` is a Java-serialized object: kept as opaque text in
`meta`, never deserialized.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats.base import (
    Codec,
    emit,
    first_reason,
    lookup,
    msg,
    text_map,
    txt,
    typed_map,
    unknown_op_reason,
)
from cdc_pipelines.formats.dataworks2 import OPS as DATAWORKS2_OPS

SPLIT_BEFORE, SPLIT_AFTER = "UPDATE_BEFOR", "UPDATE_AFTER"
# DataWorks 2.0's ops plus the Kafka JSON ones: split update halves and the task heartbeat
OPS = {**DATAWORKS2_OPS, SPLIT_BEFORE: "UPDATE", SPLIT_AFTER: "UPDATE", "MHEARTBEAT": "HEARTBEAT"}
COLUMN_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "DOUBLE": "DOUBLE",
    "DATE": "TIMESTAMP",
    "BYTES": "BYTES",
    "LONG": "INT",
    "STRING": "STRING",
}

_IMAGE = T.StructType([T.StructField("dataColumn", J.TEXT_MAP)])
SCHEMA = T.StructType(
    [
        T.StructField("version", T.StringType()),
        T.StructField(
            "schema",
            T.StructType(
                [
                    T.StructField(
                        "dataColumn",
                        T.ArrayType(
                            T.StructType([T.StructField("name", T.StringType()), T.StructField("type", T.StringType())])
                        ),
                    ),
                    T.StructField("primaryKey", T.ArrayType(T.StringType())),
                    T.StructField("source", J.TEXT_MAP),
                ]
            ),
        ),
        T.StructField(
            "payload",
            T.StructType(
                [
                    T.StructField("before", _IMAGE),
                    T.StructField("after", _IMAGE),
                    T.StructField("sequenceId", T.StringType()),
                    T.StructField("scn", T.StringType()),
                    T.StructField("op", T.StringType()),
                    T.StructField("timestamp", J.TEXT_MAP),
                    T.StructField(
                        "ddl",
                        T.StructType([T.StructField("text", T.StringType()), T.StructField("ddlMeta", T.StringType())]),
                    ),
                ]
            ),
        ),
    ]
)


def decode_dataworks_json(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    raw_op = txt(msg("payload.op"))
    op = lookup(OPS, raw_op)
    is_row = op.isin(*C.ROW_OPS)
    source = J.image_text(msg("schema.source"))
    stamps = J.image_text(msg("payload.timestamp"))
    sequence = txt(msg("payload.sequenceId"))
    before, after = msg("payload.before.dataColumn"), msg("payload.after.dataColumn")
    source_types = typed_map(F.transform(msg("schema.dataColumn"), lambda c: F.struct(txt(c["name"]), txt(c["type"]))))
    # DataWorks stamps are 13-digit millis; -1 marks "unknown" (full-load rows) and stays in meta only
    event_time, unit = C.epoch_time(F.nullif(F.element_at(stamps, "eventTime"), F.lit("-1")), "ms")
    sync_time, _ = C.epoch_time(F.nullif(F.element_at(stamps, "systemTime"), F.lit("-1")), "ms")
    table = F.element_at(source, "tableName")
    # a split half has one image; a merged UPDATE_AFTER carries both and needs no partner
    is_half = ((raw_op == SPLIT_BEFORE) & after.isNull()) | ((raw_op == SPLIT_AFTER) & before.isNull())
    fields = {
        "op": op,
        "raw_op": raw_op,
        "db": F.element_at(source, "dbName"),
        "db_schema": F.element_at(source, "schemaName"),
        "table_name": table,
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "seq": sequence,
        "position": txt(msg("payload.scn")),
        "pk_columns": msg("schema.primaryKey"),
        "before_raw": F.when(is_row, before),
        "after_raw": F.when(is_row, after),
        "column_types": F.transform_values(
            source_types, lambda _k, v: F.coalesce(lookup(COLUMN_TYPES, F.upper(v)), C.logical_type(v))
        ),
        "source_types": source_types,
        # a DATE is epoch millis at any date: its digit count does not tell its unit before 1973
        "temporal_units": F.map_filter(
            F.transform_values(source_types, lambda _k, v: F.when(F.upper(v) == "DATE", F.lit("ms"))),
            lambda _k, v: v.isNotNull(),
        ),
        "ddl": F.when(op == "DDL", txt(msg("payload.ddl.text"))),
        "meta": text_map(
            ("version", txt(msg("version"))),
            ("dbType", F.element_at(source, "dbType")),
            ("dbVersion", F.element_at(source, "dbVersion")),
            ("eventTime", F.element_at(stamps, "eventTime")),
            ("systemTime", F.element_at(stamps, "systemTime")),
            ("checkpointTime", F.element_at(stamps, "checkpointTime")),
            ("sequenceId", sequence),
            ("scn", txt(msg("payload.scn"))),
            ("ddlMeta", txt(msg("payload.ddl.ddlMeta"))),
        ),
    }
    reason = first_reason(
        (raw_op.isNull(), "missing payload.op"),
        (op.isNull(), unknown_op_reason("payload.op", raw_op)),
        (is_half & sequence.isNull(), F.concat(raw_op, F.lit(" without payload.sequenceId to pair it"))),
    )
    key = F.when(is_half, F.concat_ws("\u0001", F.element_at(source, "dbName"), table, sequence))
    return emit(df, fields, reason, pair_key=key)


# ---------------------------------------------------------------- encoder
#
# Version 0.0.1 messages. Canonical types map to DataWorks' six: INT -> LONG and FLOAT/DOUBLE ->
# DOUBLE (JSON numbers), DECIMAL -> DOUBLE written as a string (every digit kept, as DataWorks itself
# writes decimals), TIMESTAMP -> DATE (13-digit epoch millis), BOOLEAN, BYTES (base64); everything
# else (DATE, TIME, DATETIME, JSON, ...) is STRING with its canonical text. An update is split into
# UPDATE_BEFOR + UPDATE_AFTER sharing `sequenceId` (option `merged=true`: one UPDATE_AFTER with both
# images; `auto`, the default, keeps a DataWorks event's own shape and splits the others).

ENCODE_OPS = {
    "INSERT": "INSERT",
    "DELETE": "DELETE",
    "HEARTBEAT": "MHEARTBEAT",
    "TX_BEGIN": "TRANSACTION_BEGIN",
    "TX_END": "TRANSACTION_END",
    "TRUNCATE": "TRUNCATE",
}
LOGICAL_TO_COLUMN_TYPE = {
    "BOOLEAN": "BOOLEAN", "INT": "LONG", "FLOAT": "DOUBLE", "DOUBLE": "DOUBLE", "DECIMAL": "DOUBLE",
    "TIMESTAMP": "DATE", "BYTES": "BYTES",
}  # fmt: skip
MERGED_CHOICES = ("auto", "true", "false")
DEFAULT_VERSION = "0.0.1"
_INSTANT = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?Z")
_INTEGER = re.compile(r"-?[0-9]+")


def ddl_op(ddl: str | None) -> str:
    """The DataWorks op of a DDL statement: CREATE, ALTER, ERASE (drop), RENAME, CINDEX, DINDEX or QUERY."""
    words = re.sub(r"/\*.*?\*/", " ", ddl or "", flags=re.S).upper().split()
    first = words[0] if words else ""
    if first in ("CREATE", "DROP") and "INDEX" in words[1:4]:
        return "CINDEX" if first == "CREATE" else "DINDEX"
    return {"CREATE": "CREATE", "ALTER": "ALTER", "DROP": "ERASE", "RENAME": "RENAME"}.get(first, "QUERY")


def instant_millis(value: str, nanos: bool = False):
    """Canonical TIMESTAMP text -> 13-digit epoch millis (a JSON number); None if it is no instant.

    `nanos`: a fraction finer than milliseconds is kept in the `13.9` form (millis plus the 9-digit
    nanosecond-of-second fraction), which the decoder reads back.
    """
    match = _INSTANT.fullmatch(value)
    if not match:
        return None
    day, clock, fraction = match.groups()
    fraction = fraction or ""
    seconds = E.epoch_seconds(dt.datetime.fromisoformat(f"{day}T{clock}+00:00"))
    millis = seconds * 1000 + int(fraction[:3].ljust(3, "0"))
    text = f"{millis}.{fraction.ljust(9, '0')}" if nanos and len(fraction) > 3 else str(millis)
    return E.number(text)


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
        millis = instant_millis(text, nanos=True)
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
    if merged not in MERGED_CHOICES:
        raise ValueError(f"option merged={merged!r} must be one of {', '.join(MERGED_CHOICES)}")
    if same and op != "UPDATE" and OPS.get(raw_op or "") == op:
        op_text = raw_op
    elif op == "DDL":
        op_text = ddl_op(event.get("ddl"))
    elif op in ENCODE_OPS:
        op_text = ENCODE_OPS[op]
    elif op != "UPDATE":
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
    if merged == "auto":
        split = "cdc.before_raw_op" in meta if same else True
    else:
        split = merged == "false"
    if before is None or not split:  # one message: merged, or an after image alone
        op_value = raw_op if same and OPS.get(raw_op or "") == "UPDATE" else SPLIT_AFTER
        if op_value == SPLIT_AFTER and before is None and sequence is None:
            sequence = E.synthetic_sequence(event)  # a lone after half still needs a sequenceId
        return [message(op_value, before, after, sequence)]
    # split halves pair by sequenceId: one is made up when the event has none
    sequence = sequence if sequence is not None else E.synthetic_sequence(event)
    before_op = meta.get("cdc.before_raw_op", SPLIT_BEFORE) if same else SPLIT_BEFORE
    return [message(before_op, before, None, sequence), message(SPLIT_AFTER, None, after, sequence)]


DATAWORKS_JSON = Codec(
    "dataworks-json",
    SCHEMA,
    decode_dataworks_json,
    options={"merged": "auto"},
    update_has_before=False,
    split_update=True,
    encode=encode_dataworks_json,
    description="DataWorks Kafka JSON / DataHub BLOB payload",
)
