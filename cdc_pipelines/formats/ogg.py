"""Oracle GoldenGate JSON (the OGG for Big Data JSON formatter, as Flink's and Paimon's `ogg-json` read it).

docs/formats/peers.md maps its fields. `op_ts` (when the source made the change) and `current_ts` (when
GoldenGate wrote it) are date-time text without a zone (`2020-05-13 15:40:06.000000`,
`2020-05-13T13:39:35.766000`), read in the `timezone` option (default UTC). An update carries a before image
only where GoldenGate was set to write one, and it may hold only the key and the changed columns. OGG
carries no column types here: every column is UNKNOWN and keeps its text.

The encoder writes one message per event, times as wall-clock text in `timezone` with six fraction digits;
an OGG event's own `op_ts`/`current_ts`/`pos`, `tokens` and other fields go back as they came.
"""

from __future__ import annotations

from collections.abc import Mapping

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import envelope as V
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import BAD_SYNC_TIME, Codec, RawEvent, Reject, op_of, timezone_option

FORMAT_ID = "ogg-json"
OPS = {"I": "INSERT", "U": "UPDATE", "D": "DELETE", "T": "TRUNCATE"}
ENCODE_OPS = {v: k for k, v in OPS.items()}
META_FIELDS = {"op_ts": "text", "current_ts": "text", "pos": "text", "csn": "number", "xid": "text"}
ENVELOPE = ("table", "op_type", "primary_keys", "before", "after")
OPTIONS = (timezone_option("`op_ts` and `current_ts`"),)


def decode_ogg(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """One OGG JSON message -> one raw event."""
    msg = J.parse_object(message)
    raw_op = J.text(msg.get("op_type"))
    op = op_of(raw_op, OPS, "op_type")
    meta = V.read_meta(msg, META_FIELDS)
    V.keep_extra(msg, {*ENVELOPE, *META_FIELDS}, meta)
    timezone = options.get("timezone", "UTC")
    event_time, unit = V.local_time_of(meta.get("op_ts"), timezone)
    sync_time, _ = V.local_time_of(meta.get("current_ts"), timezone)
    if sync_time is None and meta.get("current_ts") is not None:
        raise Reject(BAD_SYNC_TIME)
    db, table = V.split_table(J.text(msg.get("table")))
    before, after = V.object_field(msg, "before"), V.object_field(msg, "after")
    if op == "TRUNCATE":
        before = after = None
    return [
        {
            "op": op,
            "raw_op": raw_op,
            "db": db,
            "table_name": table,
            "event_time": event_time,
            "event_time_unit": unit,
            "sync_time": sync_time,
            "tx_id": meta.get("xid"),
            "position": meta.get("pos"),
            "pk_columns": V.text_list(msg, "primary_keys"),
            "before": before,
            "after": after,
            "meta": meta,
        }
    ]


def encode_ogg(event: dict, options: Mapping[str, str]) -> list:
    op = event["op"]
    if op not in ENCODE_OPS:
        why = " (an UPSERT is neither an insert nor an update)" if op == "UPSERT" else ""
        raise E.Unsupported(f"ogg has no {op} message{why}")
    if not event.get("table_name"):
        raise E.Unsupported(f"{op} without a table name")
    same = E.from_same_family(event, FORMAT_ID)
    meta = event.get("meta") or {}
    timezone = options.get("timezone", "UTC")
    table = ".".join(p for p in (event.get("db"), event["table_name"]) if p)
    message: dict = {"table": table, "op_type": ENCODE_OPS[op]}
    if same:
        message |= V.write_meta(meta, META_FIELDS)
    else:
        message["op_ts"] = V.local_text(event.get("event_time"), timezone)
        message["current_ts"] = V.local_text(event.get("sync_time"), timezone, "T")
        message["pos"] = event.get("position")
        message["xid"] = event.get("tx_id")
    message["primary_keys"] = event.get("pk_columns")
    if op != "TRUNCATE":
        message["before"] = E.image_json(event, event.get("before"))
        message["after"] = E.image_json(event, event.get("after"))
    if same:
        message |= V.extra_fields(meta)
    return [E.dumps({k: v for k, v in message.items() if v is not None or k in ("before", "after")})]


def recognise_ogg(message: dict) -> bool:
    """`op_type` and `table` with an image; a truncate (`T`) carries none."""
    return {"op_type", "table"} <= message.keys() and (
        "before" in message or "after" in message or message["op_type"] == "T"
    )


OGG_JSON = Codec(
    FORMAT_ID,
    decode_ogg,
    encode_ogg,
    options=OPTIONS,
    update_has_before=False,
    # a replayed trail record is formatted again (`current_ts`); its `pos` and `op_ts` stay
    delivery_fields=("sync_time", "meta.current_ts"),
    event_time_unit="us",
    description="Oracle GoldenGate JSON",
    recognise=recognise_ogg,
)
