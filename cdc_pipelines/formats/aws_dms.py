"""AWS DMS JSON (what DMS writes to a Kafka or Kinesis target, as Paimon's `aws-dms-json` reads it).

A message is `{"data": {...}, "metadata": {...}}`; docs/formats/peers.md maps its fields. The event time is
`commit-timestamp` where the record has one (transaction details; `timestamp` is then the sync time), else
`timestamp`. An update's before image comes from the before-image columns DMS adds to `data` (table mapping
`add-before-image-columns`: option `before_prefix`, `BI_`) or from a top-level object (task setting
`BeforeImageSettings`: option `before_image`, `before-image`); either may hold only some columns (`pk-only`),
so the before image is the after image overlaid with them, as Paimon reads it. A control record is an OTHER
event with its `data` kept in meta (DMS sends no DDL text). DMS carries no column types: every column is
UNKNOWN and keeps its text.

The encoder writes one message per event, the before image (if any) as `BI_` columns.
"""

from __future__ import annotations

from collections.abc import Mapping

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import envelope as V
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import BAD_SYNC_TIME, Codec, Option, RawEvent, Reject, timezone_option, unknown_op
from cdc_pipelines.model import meta_keys

FORMAT_ID = "aws-dms-json"
DATA_OPS = {"load": "INSERT", "insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}
ENCODE_OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
# the metadata fields in the order DMS writes them (fields it does not document come last) -> how meta keeps
# them (None: read into the event itself)
METADATA = {
    "timestamp": "text",
    "record-type": "text",
    "operation": None,
    "partition-key-type": "text",
    "schema-name": None,
    "table-name": None,
    "transaction-id": "number",
    "commit-timestamp": "text",
    "stream-position": "text",
    "transaction-record-id": "number",
    "prev-transaction-id": "number",
    "prev-transaction-record-id": "number",
}
META_FIELDS = {k: kind for k, kind in METADATA.items() if kind}
_METADATA_ORDER = {k: i for i, k in enumerate(METADATA)}
OPTIONS = (
    timezone_option("metadata timestamps"),
    Option("before_prefix", "BI_", "prefix of the before-image columns in `data` (empty: none)"),
    Option("before_image", "before-image", "top-level field that holds the before image (empty: none)"),
)
CONTROL_DATA = "control-data"


def decode_aws_dms(message: bytes, options: Mapping[str, str]) -> list[RawEvent]:
    """One AWS DMS JSON message -> one raw event."""
    msg = J.parse_object(message)
    metadata = V.object_field(msg, "metadata")
    if metadata is None:
        raise Reject("missing metadata")
    record_type = J.text(metadata.get("record-type"))
    raw_op = J.text(metadata.get("operation"))
    if raw_op is None:
        raise Reject("missing operation")
    if record_type == "data":
        op = DATA_OPS.get(raw_op)
        if op is None:
            raise unknown_op("operation", raw_op)
    elif record_type == "control":
        op = "OTHER"
    else:
        raise unknown_op("record-type", record_type)
    meta = V.read_meta(metadata, META_FIELDS)
    before_field = options.get("before_image", "before-image")
    V.keep_extra(metadata, METADATA, meta)
    if meta_keys.EXTRA in meta:  # unknown metadata fields: kept apart from unknown top-level fields
        meta[meta_keys.EXTRA_METADATA] = meta.pop(meta_keys.EXTRA)
    V.keep_extra(msg, ("data", "metadata", before_field), meta)
    # with transaction details, `commit-timestamp` is when the source committed the change and
    # `timestamp` when DMS wrote the record; without them, `timestamp` is the only time there is
    timezone = options.get("timezone", "UTC")
    committed = meta.get("commit-timestamp")
    event_time, unit = V.local_time_of(committed or meta.get("timestamp"), timezone)
    sync_time = V.local_time_of(meta.get("timestamp"), timezone)[0] if committed else None
    if committed and sync_time is None and meta.get("timestamp") is not None:
        raise Reject(BAD_SYNC_TIME)
    event = {
        "op": op,
        "raw_op": raw_op,
        "db": J.text(metadata.get("schema-name")),
        "table_name": J.text(metadata.get("table-name")),
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "tx_id": meta.get("transaction-id"),
        "position": meta.get("stream-position"),
        "meta": meta,
    }
    data = V.object_field(msg, "data")
    if op == "OTHER":
        if msg.get("data") is not None:
            meta[CONTROL_DATA] = J.dumps_exact(msg["data"])
        return [event]
    if data is None:
        raise Reject(f"aws dms {raw_op} record without `data`")
    if op == "INSERT":
        return [event | {"after": data}]
    if op == "DELETE":
        return [event | {"before": data}]
    # an update's before-image columns come out of `data` (prefixed) and from the before-image field
    prefix = options.get("before_prefix", "BI_")
    before = {k[len(prefix) :]: v for k, v in data.items() if k.startswith(prefix)} if prefix else {}
    after = {k: v for k, v in data.items() if not k.startswith(prefix)} if before else data
    image = V.object_field(msg, before_field) if before_field else None
    if image is not None:
        before |= image
        meta[meta_keys.BEFORE_IMAGE_FIELD] = before_field
    return [event | {"before": {**after, **before} if before or image is not None else None, "after": after}]


def encode_aws_dms(event: dict, options: Mapping[str, str]) -> list:
    op = event["op"]
    same = E.from_same_family(event, FORMAT_ID)
    meta = event.get("meta") or {}
    if op not in ENCODE_OPS and not (same and op == "OTHER"):
        why = " (an UPSERT is neither an insert nor an update)" if op == "UPSERT" else ""
        raise E.Unsupported(f"aws dms has no {op} record{why}")
    E.require_table(event)
    prefix = options.get("before_prefix", "BI_")
    if same:
        metadata = V.write_meta(meta, META_FIELDS)
    else:
        metadata = {
            "timestamp": V.instant_text(event.get("event_time")),
            "record-type": "data",
            "partition-key-type": "schema-table",
            "transaction-id": E.number(event.get("tx_id")),
            "stream-position": event.get("position"),
        }
    raw = event.get("raw_op")
    if op == "OTHER":
        operation = raw
    elif op == "INSERT" and raw in ("load", "INIT", "ROW", "r"):
        operation = "load"
    else:
        operation = ENCODE_OPS[op]
    metadata |= {"operation": operation, "schema-name": event.get("db"), "table-name": event.get("table_name")}
    if same and meta.get(meta_keys.EXTRA_METADATA):
        metadata |= V.extra_fields({meta_keys.EXTRA: meta[meta_keys.EXTRA_METADATA]})
    metadata = {k: metadata[k] for k in sorted(metadata, key=lambda k: _METADATA_ORDER.get(k, len(_METADATA_ORDER)))}
    message: dict = {}
    if op == "OTHER":
        if meta.get(CONTROL_DATA) is not None:
            message["data"] = V.extra_fields({meta_keys.EXTRA: '{"data":' + meta[CONTROL_DATA] + "}"})["data"]
    elif op == "UPDATE":
        after, before = event["after"], event.get("before")
        if prefix and any(k.startswith(prefix) for k in (*after, *(before or ()))):
            raise E.Unsupported(f"a column named with the before-image prefix {prefix!r} cannot be told apart")
        if before == {}:
            raise E.Unsupported("UPDATE with an empty before image: DMS would write no before-image column")
        field = meta.get(meta_keys.BEFORE_IMAGE_FIELD) if same else None
        data = dict(after)
        if before is not None and field:  # the before image came in its own field: it goes back there
            message[field] = E.image_json(event, before)
        elif before is not None:
            if not prefix:
                raise E.Unsupported("UPDATE with a before image, but no before_prefix to write it with")
            data |= {prefix + k: v for k, v in before.items()}
        message = {"data": _image(event, data, prefix), **message}
    else:
        message["data"] = _image(event, event["before"] if op == "DELETE" else event["after"], prefix)
    message["metadata"] = {k: v for k, v in metadata.items() if v is not None}
    if same:
        message |= V.extra_fields(meta)
    return [E.dumps(message)]


def _image(event: dict, image: dict, prefix: str) -> dict:
    """An image as JSON; a `BI_` column is a number where its column is."""
    numbers = E.json_numbers(event)
    if numbers is None or not prefix:
        return E.image_json(event, image)
    widened = {*numbers, *(prefix + k for k in numbers)}
    return E.image_json({**event, "meta": {meta_keys.JSON_NUMBERS: J.dumps_exact(sorted(widened))}}, image)


def recognise_aws_dms(message: dict) -> bool:
    """A `metadata` object with `record-type` and `operation`."""
    metadata = message.get("metadata")
    return isinstance(metadata, dict) and "record-type" in metadata and "operation" in metadata


AWS_DMS_JSON = Codec(
    FORMAT_ID,
    decode_aws_dms,
    encode_aws_dms,
    options=OPTIONS,
    update_has_before=False,
    event_time_unit="us",
    names_pk=False,
    description="AWS DMS JSON (Kafka/Kinesis target)",
    recognise=recognise_aws_dms,
)
