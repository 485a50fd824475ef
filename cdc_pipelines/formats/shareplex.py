"""SharePlex JSON (OMS seed 000; DTS seeds 001/003): `data`, `meta`, `key`, `sql`.

DTS adds `userid` and the long op names, including a split update (`UPDATE BEFORE` then `UPDATE
AFTER`, paired by table, `trans` and `rowid`). On update, `key` is the before image and `data`
only the changed columns, so the after image is `key` overlaid with `data`; the changed column
names are kept in `meta`. `meta.table` is `db.table`; `meta.time` is a UTC date-time text with
second precision. `DROP COLUMN` without `sql.ddl` keeps the op itself as its DDL text.

The encoders write `ins`/`upd`/`del`/`ddl` (DTS keeps a long op name its SharePlex source had, and
sends a paired DTS split update out again as its two halves); `upd` carries `key` (before image)
and `data` (changed columns only). SharePlex has no PK names and no column types.
"""

from __future__ import annotations

import datetime as dt
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
    overlay,
    prefixed,
    text_map,
    unknown_op_reason,
)

OPS = {
    "ins": "INSERT",
    "upd": "UPDATE",
    "del": "DELETE",
    "ddl": "DDL",
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "TRUNCATE": "TRUNCATE",
    "DROP COLUMN": "DDL",
    "UPDATE BEFORE": "UPDATE",
    "UPDATE AFTER": "UPDATE",
}
SPLIT_BEFORE, SPLIT_AFTER = "UPDATE BEFORE", "UPDATE AFTER"

SCHEMA = T.StructType(
    [
        T.StructField("data", J.TEXT_MAP),
        T.StructField("meta", J.TEXT_MAP),
        T.StructField("key", J.TEXT_MAP),
        T.StructField("sql", J.TEXT_MAP),
    ]
)


def decode_shareplex(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    meta = J.image_text(msg("meta"))
    raw_op = F.element_at(meta, "op")
    op = lookup(OPS, raw_op)
    data, key = msg("data"), msg("key")
    table = F.element_at(meta, "table")
    is_half = raw_op.isin(SPLIT_BEFORE, SPLIT_AFTER)
    pair = F.concat_ws("\u0001", table, F.element_at(meta, "trans"), F.element_at(meta, "rowid"))
    pair = F.when(F.element_at(meta, "trans").isNotNull() & F.element_at(meta, "rowid").isNotNull(), pair)
    has_db = F.instr(table, ".") > 0
    event_time, unit = C.time_of(F.element_at(meta, "time"))
    sync_time, _ = C.time_of(F.element_at(meta, "posttime"))
    fields = {
        "op": op,
        "raw_op": raw_op,
        # split at the last dot: an OceanBase db is `tenant.database`
        "db": F.when(has_db, F.regexp_extract(table, r"^(.*)\.[^.]*$", 1)),
        "table_name": F.when(has_db, F.substring_index(table, ".", -1)).otherwise(table),
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "tx_id": F.element_at(meta, "trans"),
        "seq": F.element_at(meta, "seq"),
        "position": F.nullif(F.element_at(meta, "scn"), F.lit("null")),
        "before_raw": F.when(op == "DELETE", data)
        .when(raw_op == SPLIT_BEFORE, F.coalesce(key, data))
        .when(raw_op == SPLIT_AFTER, F.lit(None))
        .when(op == "UPDATE", key),
        "after_raw": F.when(op == "INSERT", data)
        .when(raw_op == SPLIT_AFTER, overlay(key, data))
        .when(raw_op == SPLIT_BEFORE, F.lit(None))
        .when(op == "UPDATE", overlay(key, data)),
        "ddl": F.when(op == "DDL", F.coalesce(F.element_at(J.image_text(msg("sql")), "ddl"), raw_op)),
        "meta": F.map_concat(
            prefixed(msg("meta"), "meta."),
            text_map(
                ("cdc.changed_columns", F.when(op == "UPDATE", F.to_json(F.coalesce(F.map_keys(data), F.array()))))
            ),
        ),
    }
    reason = first_reason(
        (msg("meta").isNull(), "missing meta"),
        (raw_op.isNull(), "missing meta.op"),
        (op.isNull(), unknown_op_reason("meta.op", raw_op)),
        ((op == "UPDATE") & ~is_half & key.isNull(), F.concat(raw_op, F.lit(" without key (the before image)"))),
        (is_half & pair.isNull(), F.concat(raw_op, F.lit(" without meta.trans and meta.rowid to pair it"))),
    )
    return emit(df, fields, reason, pair_key=F.when(is_half, pair))


SHAREPLEX_FORMATS = ("oms-shareplex", "dts-shareplex")
SHORT_OPS = {"INSERT": "ins", "UPDATE": "upd", "DELETE": "del", "DDL": "ddl"}
LONG_OPS = ("INSERT", "UPDATE", "DELETE", "TRUNCATE", "DROP COLUMN", SPLIT_BEFORE, SPLIT_AFTER)
# meta fields both SharePlex docs write as JSON numbers (the decoder keeps meta as text)
META_NUMBERS = ("size", "seq", "userid")


def _time_text(ts: dt.datetime | None) -> str | None:
    """SharePlex `time`/`posttime`: `yyyy-MM-ddTHH:mm:ss`, UTC, whole seconds."""
    if ts is None:
        return None
    if ts.tzinfo is not None:
        ts = ts.astimezone(dt.UTC)
    return f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}T{ts.hour:02d}:{ts.minute:02d}:{ts.second:02d}"


def _meta_op(event: dict, same: bool, dts: bool) -> str:
    op, raw = event["op"], event.get("raw_op")
    if dts and same and (raw in LONG_OPS or raw in SHORT_OPS.values()):
        return raw
    if op in SHORT_OPS:
        return SHORT_OPS[op]
    if op == "TRUNCATE" and dts:
        return "TRUNCATE"
    raise E.Unsupported(f"{'DTS' if dts else 'OMS'} SharePlex has no {op} op")


def _meta(event: dict, same: bool, dts: bool, op: str) -> dict:
    """`meta` as the SharePlex source wrote it (all of it, numbers where the docs have numbers), else
    built from the canonical fields; the row id is `db.table-` plus the PK values joined by \\u0001."""
    if same:
        meta = E.meta_of(event, "meta.")
        meta |= {k: E.number(meta[k]) for k in META_NUMBERS if meta.get(k) is not None}
        return meta | {"op": op}
    db, table = event.get("db"), event.get("table_name")
    qualified = f"{db}.{table}" if db and table else table
    image, pk = event.get("after") or event.get("before") or {}, event.get("pk_columns") or []
    values = E.pk_values(event) if pk and all(c in image for c in pk) else None
    rowid = None
    if qualified and (values or not dts):
        rowid = f"{qualified}-" + "\u0001".join(v or "" for v in values or [])
    meta = {
        "time": _time_text(event.get("event_time")),
        "op": op,
        "posttime": _time_text(event.get("sync_time")),
        "seq": E.number(event.get("seq")),
        "table": qualified,
        "rowid": rowid,
        "trans": event.get("tx_id"),
        "scn": event.get("position") or (None if dts else "null"),
    }
    # DTS leaves out what it does not have; OMS writes its fields with null (scn "null", as OMS does)
    return {k: v for k, v in meta.items() if v is not None} if dts else meta


def _image(event: dict, image: dict | None, dts: bool) -> dict | None:
    """An image with numbers where the source had them; OMS writes TIMESTAMP as epoch `sec.fraction` text."""
    if image is not None and not dts:
        image = E.timestamps_as_epoch(image, event.get("column_types") or {})
    return E.image_json(event, image)


def _encode(dts: bool):
    def encode(event: dict, options: Mapping[str, str]) -> list:
        same = E.from_same_family(event, *SHAREPLEX_FORMATS)
        op = event["op"]
        meta_op = _meta_op(event, same, dts)
        if op == "UPDATE" and event.get("before") is None:
            raise E.Unsupported("UPDATE without a before image: SharePlex `key` cannot be built")
        meta = _meta(event, same, dts, meta_op)
        before, after = _image(event, event.get("before"), dts), _image(event, event.get("after"), dts)
        if meta_op == SPLIT_AFTER:  # a DTS split update goes back out as its two halves
            before_op = (event.get("meta") or {}).get("cdc.before_raw_op") or SPLIT_BEFORE
            return [
                E.dumps({"meta": meta | {"op": before_op}, "data": before}),
                E.dumps({"meta": meta, "data": after}),
            ]
        if op == "INSERT":
            return [E.dumps({"data": after, "meta": meta})]
        if op == "DELETE":
            return [E.dumps({"data": before, "meta": meta})]
        if op == "UPDATE":  # `key` is the before image, `data` only the changed columns' new values
            changed = E.changed_columns(event, *SHAREPLEX_FORMATS)
            data = {k: after[k] for k in changed if k in after}
            return [E.dumps({"data": data, "meta": meta, "key": before})]
        if op == "DDL":
            ddl = event.get("ddl")
            message = {"data": {}, "meta": meta}
            if not (meta_op == "DROP COLUMN" and ddl == meta_op):  # the decoder took the op itself as DDL text
                message["sql"] = {"ddl": ddl}
            return [E.dumps(message)]
        return [E.dumps({"meta": meta})]  # TRUNCATE (DTS)

    return encode


OMS_SHAREPLEX = Codec(
    "oms-shareplex",
    SCHEMA,
    decode_shareplex,
    split_update=True,
    encode=_encode(dts=False),
    description="SharePlex JSON (OMS)",
)
DTS_SHAREPLEX = Codec(
    "dts-shareplex",
    SCHEMA,
    decode_shareplex,
    split_update=True,
    encode=_encode(dts=True),
    description="SharePlex JSON (DTS)",
)
