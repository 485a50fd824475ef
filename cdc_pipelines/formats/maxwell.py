"""Maxwell JSON (zendesk/maxwell, as Flink's and Paimon's `maxwell-json` read it): one row per message.

docs/formats/peers.md maps its fields. On update `old` holds the previous values of the changed columns
only, as canal's `old`: the before image is `data` overlaid with `old`. Maxwell carries no column types:
every column is UNKNOWN and keeps its text (JSON numbers keep their digits).

The encoder writes one message per event, `ts` in seconds; a Maxwell event's own meta (`xoffset`,
`commit`, position, DDL `def`/`old`, any other field) goes back as it came.
"""

from __future__ import annotations

from collections.abc import Mapping

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import envelope as V
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import Codec, RawEvent, Reject, op_of, overlay
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

FORMAT_ID = "maxwell-json"
ROW_TYPES = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "bootstrap-insert": "INSERT"}
DDL_TYPES = ("database-create", "database-alter", "database-drop", "table-create", "table-alter", "table-drop")
OTHER_TYPES = ("bootstrap-start", "bootstrap-complete")
OPS = {**ROW_TYPES, **dict.fromkeys(DDL_TYPES, "DDL"), **dict.fromkeys(OTHER_TYPES, "OTHER")}
ENCODE_TYPES = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
META_FIELDS = {
    "ts": "number",
    "xid": "number",
    "xoffset": "number",
    "commit": "bool",
    "position": "text",
    "gtid": "text",
    "server_id": "number",
    "thread_id": "number",
    "primary_key": "json",
}
# fields read into the canonical row itself (the rest go to meta)
ENVELOPE = ("database", "table", "type", "data", "old", "sql", "primary_key_columns")


def decode_maxwell(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """One Maxwell message -> one raw event (a row change, a DDL or a bootstrap marker)."""
    msg = J.parse_object(message)
    text = J.text
    raw_type = text(msg.get("type"))
    op = op_of(raw_type, OPS, "type")
    meta = V.read_meta(msg, META_FIELDS)
    known = {*ENVELOPE, *META_FIELDS}
    if op == "OTHER":
        known -= {"data"}  # a bootstrap marker's `data` is no row: it is kept whole
    if op == "DDL":
        known -= {"old"}  # a DDL's `old` is the previous table definition, kept whole
    V.keep_extra(msg, known, meta)
    event_time, unit = C.epoch_time(meta.get("ts"), "s")
    base = {
        "op": op,
        "raw_op": raw_type,
        "db": text(msg.get("database")),
        "table_name": text(msg.get("table")),
        "event_time": event_time,
        "event_time_unit": unit,
        "tx_id": meta.get("xid"),
        "position": meta.get("position"),
        "pk_columns": V.text_list(msg, "primary_key_columns"),
        "meta": meta,
    }
    if op == "DDL":
        return [base | {"ddl": text(msg.get("sql"))}]
    if op == "OTHER":
        return [base]
    data = V.object_field(msg, "data")
    if data is None:
        raise Reject(f"maxwell {raw_type} message without `data`")
    if op == "INSERT":
        return [base | {"after": data}]
    if op == "DELETE":
        return [base | {"before": data}]
    old = V.object_field(msg, "old")
    meta[meta_keys.CHANGED_COLUMNS] = meta_keys.changed_columns_text(tuple(old or ()))
    return [base | {"before": overlay(data, old), "after": data}]


def _maxwell_type(event: dict, same: bool) -> str:
    op, raw = event["op"], event.get("raw_op")
    if same and raw in OPS and OPS[raw] == op:
        return raw
    if op in ENCODE_TYPES:
        return "bootstrap-insert" if op == "INSERT" and raw in ("INIT", "ROW", "r", "load") else ENCODE_TYPES[op]
    if op == "DDL":
        return "table-alter" if event.get("table_name") else "database-alter"
    why = " (an UPSERT is neither an insert nor an update)" if op == "UPSERT" else ""
    raise E.Unsupported(f"maxwell has no {op} message{why}")


def encode_maxwell(event: dict, options: Mapping[str, str]) -> list:
    same = E.from_same_family(event, FORMAT_ID)
    op = event["op"]
    kind = _maxwell_type(event, same)
    E.require_table(event)
    meta = event.get("meta") or {}
    message: dict = {"database": event.get("db"), "table": event.get("table_name"), "type": kind}
    if same:
        message |= V.write_meta(meta, META_FIELDS)
    else:
        message["ts"] = E.epoch_seconds(event.get("event_time"))
        message["xid"] = E.number(event.get("tx_id"))
        message["position"] = event.get("position")
    if op == "DDL":
        message["sql"] = event.get("ddl")
    elif op in ENCODE_TYPES:
        if op == "UPDATE" and event.get("before") is None:
            raise E.Unsupported("UPDATE without a before image: maxwell `old` cannot be built")
        message["data"] = E.image_json(event, event["before"] if op == "DELETE" else event["after"])
        if op == "UPDATE":
            before = event["before"]
            changed = [k for k in E.changed_columns(event, FORMAT_ID) if k in before]
            message["old"] = E.image_json(event, {k: before[k] for k in changed})
    message["primary_key_columns"] = event.get("pk_columns")
    if same:
        message |= V.extra_fields(meta)
    return [E.dumps({k: v for k, v in message.items() if v is not None})]


def recognise_maxwell(message: dict) -> bool:
    """Maxwell writes canal's fields but lower-case types (`insert`, `table-alter`) and no `isDdl`."""
    kind = message.get("type")
    return "isDdl" not in message and "database" in message and isinstance(kind, str) and kind in OPS


MAXWELL_JSON = Codec(
    FORMAT_ID,
    decode_maxwell,
    encode_maxwell,
    event_time_unit="s",
    description="Maxwell JSON",
    recognise=recognise_maxwell,
)
