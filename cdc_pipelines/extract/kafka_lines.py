"""A Kafka record as the `kcat -J` line a file extract of it holds: the one rule both Kafka readers use.

Spark's Kafka source runs it in `mapInArrow` (`extract.kafka`), the native client (`extract.kafka_client`) in
this process, over the same Arrow columns (`RECORD_SCHEMA`, Spark's Kafka columns with the timestamp in epoch
ms), so the codecs, tombstones, the redelivery rule and `keys_from: kafka` see one line whichever engine read
the day. A binary format's value (DTS Avro) rides in the payload as the `{"value_b64": ...}` JSON its codec
reads; a record's lineage is `kafka://TOPIC/PARTITION` and its offset. No Spark import.
"""

from __future__ import annotations

import base64

import orjson
import pyarrow as pa

# the envelope the decode unwraps a Kafka day's lines with (`extract.messages.unwrap_kcat`)
KAFKA_ENVELOPE = "kcat"
_HEADER = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
# Spark's Kafka columns, the timestamp as epoch ms (`ts`); `timestampType` in Kafka's ids (0 create, 1 logappend)
RECORD_SCHEMA = pa.schema([
    pa.field("topic", pa.string()), pa.field("partition", pa.int32()), pa.field("offset", pa.int64()),
    pa.field("timestampType", pa.int32()), pa.field("ts", pa.int64()), pa.field("headers", pa.list_(_HEADER)),
    pa.field("key", pa.binary()), pa.field("value", pa.binary()),
])  # fmt: skip
TIMESTAMP_TYPES = {0: "create", 1: "logappend"}


def lineage_file(topic: str, partition: int) -> str:
    """The `source_file` of a record of `partition` (its `source_line` is its offset)."""
    return f"kafka://{topic}/{partition}"


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", "replace")


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def kcat_line(record: dict, binary_value: bool, key_base64: bool) -> bytes:
    """One record (a row of `RECORD_SCHEMA`) as its `kcat -J` line, in kcat's field order; a null key, payload
    or header list is left out, as kcat leaves it null (both read as absent). `binary_value`: the value in
    base64 as `{"value_b64": ...}`; `key_base64`: the key's bytes in base64 (an Avro key, which the codec's
    `decode_key` reads), else its text."""
    envelope = {
        "topic": record["topic"], "partition": record["partition"], "offset": record["offset"],
        "tstype": TIMESTAMP_TYPES.get(record["timestampType"], "none"), "ts": record["ts"],
    }  # fmt: skip
    if record["headers"]:
        envelope["headers"] = [x for h in record["headers"] for x in (h["key"], _text(h["value"]))]
    key = (_b64 if key_base64 else _text)(record["key"])
    if key is not None:
        envelope["key"] = key
    value = record["value"]
    if value is not None:
        envelope["payload"] = orjson.dumps({"value_b64": _b64(value)}).decode() if binary_value else _text(value)
    return orjson.dumps(envelope)


def kcat_lines(batch: pa.RecordBatch, binary_value: bool, key_base64: bool) -> list[bytes]:
    """`kcat_line` of every record of `batch`, in order."""
    return [kcat_line(r, binary_value, key_base64) for r in batch.to_pylist()]
