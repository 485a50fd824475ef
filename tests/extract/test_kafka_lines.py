"""The kcat line of a Kafka record (`extract.kafka_lines`, what both Kafka readers make), without a broker:
each record's line unwraps to the payload and `cdc.kafka.*` meta that kcat's own `-J` line of it gives."""

from __future__ import annotations

import base64
import json

import pyarrow as pa

from cdc_pipelines.extract.kafka_lines import RECORD_SCHEMA, kcat_line, kcat_lines, lineage_file
from cdc_pipelines.extract.messages import unwrap_kcat

TS = 1_793_491_200_000


def _record(**fields) -> dict:
    return {"topic": "orders", "partition": 2, "offset": 41, "timestampType": 0, "ts": TS, "headers": [],
            "key": None, "value": b'{"id": 1.10}'} | fields  # fmt: skip


def _kcat(record: dict, payload: str | None, key: str | None) -> bytes:
    """kcat -J's own line of `record` (its `broker` field too, which the meta does not keep)."""
    envelope = {"topic": record["topic"], "partition": record["partition"], "offset": record["offset"],
                "tstype": {0: "create", 1: "logappend"}.get(record["timestampType"], "none"), "ts": record["ts"],
                "broker": 1}  # fmt: skip
    if record["headers"]:
        envelope["headers"] = [x for h in record["headers"] for x in (h["key"], h["value"] and h["value"].decode())]
    envelope |= {"key": key, "payload": payload}
    return json.dumps(envelope).encode()


def test_text_records_unwrap_as_kcat_lines_do():
    """Payload text exact (1.10 stays 1.10), headers as kcat's flat list (a null value null), a null key and a
    tombstone (null value) left out, each timestamp type named."""
    records = [
        _record(),
        _record(key=b'{"id":1}', headers=[{"key": "trace", "value": b"t-1"}, {"key": "empty", "value": None}]),
        _record(value=None, key=b'{"id":1}', timestampType=1),
        _record(timestampType=-1, value='caf\u00e9 "q"\n'.encode()),
    ]
    for r in records:
        ours = unwrap_kcat(kcat_line(r, binary_value=False, key_base64=False))
        payload = None if r["value"] is None else r["value"].decode()
        assert ours == unwrap_kcat(_kcat(r, payload, None if r["key"] is None else r["key"].decode()))
    assert unwrap_kcat(kcat_line(records[1], False, False))[1]["cdc.kafka.headers"] == '["trace","t-1","empty",null]'
    assert unwrap_kcat(kcat_line(records[2], False, False))[0] is None


def test_binary_values_and_keys_ride_in_base64():
    """A binary format's value as a `{"value_b64": ...}` payload (no line breaks), an Avro key in base64."""
    value, key = bytes(range(256)) * 2, b"\x00\x00\x00\x00\x65\xd2\x0f"
    line = kcat_line(_record(value=value, key=key), binary_value=True, key_base64=True)
    envelope = json.loads(line)
    assert b"\n" not in line and json.loads(envelope["payload"]) == {"value_b64": base64.b64encode(value).decode()}
    assert base64.b64decode(envelope["key"]) == key
    assert json.loads(kcat_line(_record(key=b"k"), binary_value=False, key_base64=False))["key"] == "k"


def test_lines_of_an_arrow_batch_and_their_lineage():
    rows = [_record(offset=o) for o in (5, 6)]
    batch = pa.RecordBatch.from_pylist(rows, schema=RECORD_SCHEMA)
    assert kcat_lines(batch, False, False) == [kcat_line(r, False, False) for r in rows]
    assert lineage_file("orders", 2) == "kafka://orders/2"
