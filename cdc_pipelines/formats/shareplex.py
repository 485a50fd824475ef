"""SharePlex JSON (OMS seed 000; DTS seeds 001/003): `data`, `meta`, `key`, `sql`.

DTS adds `userid` and the long op names, including a split update (`UPDATE BEFORE` then `UPDATE
AFTER`, paired by table, `trans` and `rowid`). On update, `key` is the before image and `data`
only the changed columns, so the after image is `key` overlaid with `data`; the changed column
names are kept in `meta`. `meta.table` is `db.table`; `meta.time` (event time) and `meta.posttime`
(sync time) are date-time text with second precision and no zone (DTS documents UTC), read in the
`timezone` option (default UTC). `DROP COLUMN` without `sql.ddl` keeps the op itself as its DDL text.

The encoders write `ins`/`upd`/`del`/`ddl` (DTS keeps a long op name its SharePlex source had, and
sends a paired DTS split update out again as its two halves); `upd` carries `key` (before image)
and `data` (changed columns only); times go out as wall-clock text in `timezone`. SharePlex has no
PK names and no column types.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import msgspec

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import envelope as V
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import (
    BAD_EVENT_TIME,
    BAD_SYNC_TIME,
    Codec,
    RawEvent,
    Reject,
    op_of,
    overlay,
    timezone_option,
)
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

SPLIT_BEFORE, SPLIT_AFTER = "UPDATE BEFORE", "UPDATE AFTER"
SHORT_OPS = {"INSERT": "ins", "UPDATE": "upd", "DELETE": "del", "DDL": "ddl"}
# DTS's long op names: the canonical ops' own, DROP COLUMN (a DDL) and the halves of a split update
LONG_OPS = {op: op for op in ("INSERT", "UPDATE", "DELETE", "TRUNCATE")} | {"DROP COLUMN": "DDL"}
LONG_OPS |= dict.fromkeys((SPLIT_BEFORE, SPLIT_AFTER), "UPDATE")
OPS = {**{name: op for op, name in SHORT_OPS.items()}, **LONG_OPS}
# times repeat from message to message (second or millisecond precision): parse each text once per zone
_time_of = functools.lru_cache(maxsize=4096)(V.local_time_of)
OPTIONS = (timezone_option("`time` and `posttime`"),)


class _Sql(msgspec.Struct, gc=False):
    ddl: Any = None


class SharePlexMessage(msgspec.Struct, gc=False):
    """A SharePlex message's envelope: each part an object or null."""

    data: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    key: dict[str, Any] | None = None
    sql: _Sql | None = None


_PARSE = J.struct_parser(SharePlexMessage)


def decode_shareplex(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    msg = _PARSE(message)
    meta, data, key = msg.meta, msg.data, msg.key
    if meta is None:
        raise Reject("missing meta")
    # the whole meta object as text (null values kept, as the SharePlex source wrote them), and as event meta
    event_meta = {"meta." + k: v for k, v in J.texts(meta).items()}
    raw_op = meta.get("op")
    op = op_of(raw_op, OPS, "meta.op")
    is_half = raw_op == SPLIT_BEFORE or raw_op == SPLIT_AFTER
    if op == "UPDATE" and not is_half and key is None:
        raise Reject(f"{raw_op} without key (the before image)")
    table, trans, rowid = meta.get("table"), meta.get("trans"), meta.get("rowid")
    pair_key = None
    if is_half:
        if trans is None or rowid is None:
            raise Reject(f"{raw_op} without meta.trans and meta.rowid to pair it")
        pair_key = "\u0001".join(x for x in (table, trans, rowid) if x is not None)
    timezone = options.get("timezone", "UTC")
    event_time, unit = _time_of(meta.get("time"), timezone)
    if event_time is None and unit is not None:
        raise Reject(BAD_EVENT_TIME)
    posttime = meta.get("posttime")
    sync_time, _ = _time_of(posttime, timezone)
    if sync_time is None and posttime is not None:
        raise Reject(BAD_SYNC_TIME)
    db, table_name = V.split_table(table)
    before = after = ddl = None
    if op == "DELETE":
        before = data
    elif op == "UPDATE":
        event_meta[meta_keys.CHANGED_COLUMNS] = meta_keys.changed_columns_text(tuple(data or ()))
        if raw_op == SPLIT_BEFORE:
            before = key if key is not None else data
        elif raw_op == SPLIT_AFTER:
            after = overlay(key, data)
        else:
            before, after = key, overlay(key, data)
    elif op == "INSERT":
        after = data
    elif op == "DDL":
        ddl = J.text(msg.sql.ddl) if msg.sql is not None else None
        if ddl is None:
            ddl = raw_op
    scn = meta.get("scn")
    return [
        {
            "op": op,
            "raw_op": raw_op,
            "db": db,
            "table_name": table_name,
            "event_time": event_time,
            "event_time_unit": unit,
            "sync_time": sync_time,
            "tx_id": trans,
            "seq": meta.get("seq"),
            "position": None if scn == "null" else scn,
            "before": before,
            "after": after,
            "ddl": ddl,
            "meta": event_meta,
            "pair_key": pair_key,
        }
    ]


SHAREPLEX_FORMATS = ("oms-shareplex", "dts-shareplex")
# meta fields both SharePlex docs write as JSON numbers (the decoder keeps meta as text)
META_NUMBERS = ("size", "seq", "userid")


def _time_text(ts: dt.datetime | None, timezone: str) -> str | None:
    """SharePlex `time`/`posttime`: `yyyy-MM-ddTHH:mm:ss`, wall clock in `timezone`, whole seconds."""
    if ts is None:
        return None
    ts = (ts if ts.tzinfo is not None else ts.replace(tzinfo=dt.UTC)).astimezone(C.zone(timezone))
    return f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}T{ts.hour:02d}:{ts.minute:02d}:{ts.second:02d}"


def _meta(event: dict, same: bool, dts: bool, op: str, timezone: str) -> dict:
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
        "time": _time_text(event.get("event_time"), timezone),
        "op": op,
        "posttime": _time_text(event.get("sync_time"), timezone),
        "seq": E.number(event.get("seq")),
        "table": qualified,
        "rowid": rowid,
        "trans": event.get("tx_id"),
        "scn": event.get("position") or (None if dts else "null"),
    }
    # DTS leaves out what it does not have; OMS writes its fields with null (scn "null", as OMS does)
    return {k: v for k, v in meta.items() if v is not None} if dts else meta


def _encode(event: dict, options: Mapping[str, str], dts: bool) -> list:
    same = E.from_same_family(event, *SHAREPLEX_FORMATS)
    op, raw = event["op"], event.get("raw_op")
    if dts and same and (raw in LONG_OPS or raw in SHORT_OPS.values()):
        meta_op = raw
    elif op in SHORT_OPS or (op == "TRUNCATE" and dts):
        meta_op = SHORT_OPS.get(op, op)
    else:
        raise E.Unsupported(f"{'DTS' if dts else 'OMS'} SharePlex has no {op} op")
    if op == "UPDATE" and event.get("before") is None:
        raise E.Unsupported("UPDATE without a before image: SharePlex `key` cannot be built")
    meta = _meta(event, same, dts, meta_op, options.get("timezone", "UTC"))
    # numbers where the source had them; OMS writes TIMESTAMP as epoch `sec.fraction` text
    types = event.get("column_types") or {}
    before, after = (
        E.image_json(event, image if dts else E.timestamps_as_epoch(image, types))
        for image in (event.get("before"), event.get("after"))
    )
    if meta_op == SPLIT_AFTER:  # a DTS split update goes back out as its two halves
        before_op = (event.get("meta") or {}).get(meta_keys.BEFORE_RAW_OP) or SPLIT_BEFORE
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
    if op == "DDL":  # no `sql` where the decoder took a DROP COLUMN op itself as the DDL text
        sql = {} if meta_op == "DROP COLUMN" and event.get("ddl") == meta_op else {"sql": {"ddl": event.get("ddl")}}
        return [E.dumps({"data": {}, "meta": meta} | sql)]
    return [E.dumps({"meta": meta})]  # TRUNCATE (DTS)


# the long op names that mark a message without `userid` as DTS's (detection only)
DTS_DETECTED_OPS = ("INSERT", "UPDATE", "DELETE", "TRUNCATE", "DROP COLUMN", "UPDATE BEFORE")


def recognise_shareplex(message: dict, dts: bool) -> bool:
    """A `meta` object with an `op`, DTS's (`dts`: `userid` or a long op name) or OMS's."""
    meta = message.get("meta")
    return isinstance(meta, dict) and "op" in meta and ("userid" in meta or meta["op"] in DTS_DETECTED_OPS) == dts


OMS_SHAREPLEX = Codec(
    "oms-shareplex",
    decode_shareplex,
    functools.partial(_encode, dts=False),
    options=OPTIONS,
    split_update=True,
    event_time_unit="s",
    names_pk=False,
    description="SharePlex JSON (OMS)",
    recognise=functools.partial(recognise_shareplex, dts=False),
)
DTS_SHAREPLEX = replace(
    OMS_SHAREPLEX, format_id="dts-shareplex", encode=functools.partial(_encode, dts=True),
    description="SharePlex JSON (DTS)", recognise=functools.partial(recognise_shareplex, dts=True),
)  # fmt: skip
