"""debezium-avro-confluent against a real registry (Apicurio Registry 3.3.3, Confluent's API) and an
independent implementation of the wire format (`confluent-kafka`'s `AvroSerializer` / `AvroDeserializer`).

Messages written by Confluent's serializer for every Debezium logical type of `test_debezium_avro.COLUMNS`
(values and keys, as a file of `kcat -J` lines) decode to the rows `oms-debezium` gives for the same change
in JSON, and the same messages produced into the test broker and read by `decode --kafka` give those rows;
what the project encodes, Confluent's deserializer reads back as the original values.
"""

from __future__ import annotations

import base64
import json
from decimal import Decimal

import numpy as np
import pytest

from cdc_pipelines.formats import registry as R
from tests.conftest import SAME_FORMAT_FIELDS, carried
from tests.decode.oracles import decode_paths, encode_local
from tests.formats import apicurio
from tests.formats.test_debezium_avro import (
    COLUMNS,
    FORMAT,
    OPS,
    SOURCE_VALUE,
    TX,
    envelope_schema,
    json_message,
)

pytestmark = pytest.mark.system
TOPIC = "shop.inventory.orders"
KEY_SCHEMA = {"type": "record", "name": "Key", "namespace": TOPIC, "fields": [{"name": "id", "type": "long"}]}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    try:
        running = apicurio.start_registry(tmp_path_factory.mktemp("apicurio"))
    except apicurio.NoJava21 as exc:
        pytest.fail(str(exc))  # the registry's Java is part of this machine kind: its absence is a failure
    yield running
    running.stop()
    R.forget()


def _confluent(url: str):
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

    client = SchemaRegistryClient({"url": url, "timeout": 30})  # its default waits for ever
    values = AvroSerializer(client, json.dumps(envelope_schema()), conf={"auto.register.schemas": True})
    keys = AvroSerializer(client, json.dumps(KEY_SCHEMA), conf={"auto.register.schemas": True})
    return values, keys, AvroDeserializer(client)


def _context(field: str):
    from confluent_kafka.serialization import MessageField, SerializationContext

    return SerializationContext(TOPIC, MessageField.VALUE if field == "value" else MessageField.KEY)


def test_confluent_serialized_messages_decode_to_the_rows_of_the_same_json(registry, tmp_path):
    values, keys, _ = _confluent(registry.url)
    lines = []
    for offset, (op, before, after, *_) in enumerate(OPS):
        record = {"before": before, "after": after, "source": SOURCE_VALUE, "op": op, "ts_ms": 1704067200456,
                  "ts_us": 1704067200456789, "transaction": TX}  # fmt: skip
        value = values(record, _context("value"))
        key = keys({"id": (after or before)["id"]}, _context("key"))
        lines.append({"topic": TOPIC, "partition": 0, "offset": offset, "tstype": "create", "ts": 1704067200500,
                      "key": base64.b64encode(key).decode(),
                      "payload": json.dumps({"value_b64": base64.b64encode(value).decode()})})  # fmt: skip
    path = tmp_path / "kcat.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    decoded = decode_paths(FORMAT, [path], topic=TOPIC, options={"url": registry.url}, envelope="kcat")
    assert not decoded.rejects
    assert [e["meta"]["cdc.kafka.key"] for e in decoded.events] == ['{"id":1001}'] * 3 + ['{"id":7}']
    json_path = tmp_path / "same.jsonl"
    json_path.write_bytes(b"".join(json_message(op, b, a) + b"\n" for op, _, _, b, a in OPS))
    expected = decode_paths("oms-debezium", [json_path], topic=TOPIC, options={"binary": "base64"}).events
    for event in decoded.events:
        event["meta"] = {k: v for k, v in event["meta"].items() if not k.startswith("cdc.kafka.")}
    assert [carried(e, SAME_FORMAT_FIELDS) for e in decoded.events] == [
        carried(e, SAME_FORMAT_FIELDS) for e in expected
    ]


def test_confluent_serialized_messages_read_from_the_broker(registry, kafka_broker, tmp_path, capsys):
    """The same messages produced into the test broker, a day of them read by `decode --kafka` on the local
    engine (the native client): the rows of their kcat file, the Avro key as the event's Kafka key."""
    from cdc_pipelines.cli.commands import main
    from cdc_pipelines.lake import delta_rs
    from cdc_pipelines.lake.layout import CHANGES_DIR
    from tests.extract.kafka_broker import Topics
    from tests.extract.kafka_messages import Record

    day0 = 1704067200000  # 2024-01-01 00:00 UTC
    values, keys, _ = _confluent(registry.url)
    topics, name = Topics(kafka_broker.bootstrap, day0), "avro-orders"
    topics.create(name, partitions=1)
    records = []
    for n, (op, before, after, *_) in enumerate(OPS):
        record = {"before": before, "after": after, "source": SOURCE_VALUE, "op": op, "ts_ms": 1704067200456,
                  "ts_us": 1704067200456789, "transaction": TX}  # fmt: skip
        key = keys({"id": (after or before)["id"]}, _context("key"))
        records.append(Record(0, day0 + 1000 * n, values(record, _context("value")), key))
    records.append(Record(0, day0 + 86_400_000 + 1000, records[0].value, records[0].key))  # the next day: complete
    topics.send(name, records)
    lake = tmp_path / "lake"
    code = main(["decode", "--format", FORMAT, "--kafka", kafka_broker.bootstrap, "--topic", name, "--dt",
                 "2024-01-01", "--out", str(lake), "--option", f"url={registry.url}", "--engine", "local",
                 "--conf", "kafka.timeout_ms=10000"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out.splitlines()[-1])["events"] == len(OPS)
    rows = sorted(delta_rs.read_rows(str(lake / CHANGES_DIR)), key=lambda r: r["source_line"])

    def change(event) -> tuple:
        meta = dict(event["meta"])
        return (event["op"], event["table_name"], json.dumps(dict(event["after"] or {}), sort_keys=True),
                json.dumps(dict(event["before"] or {}), sort_keys=True), meta["cdc.kafka.key"])  # fmt: skip

    expected = [change(e) for e in _decoded_from_records(registry.url, records[:-1], tmp_path)]
    assert [change(r) for r in rows] == expected
    topics.producer.close()
    topics.admin.close()


def _decoded_from_records(url: str, records, tmp_path) -> list[dict]:
    """The records as a `kcat -J` file, decoded (`test_confluent_serialized_messages_decode_...`'s path)."""
    lines = [{"topic": "avro-orders", "partition": r.partition, "offset": n, "tstype": "create", "ts": r.ts,
              "key": base64.b64encode(r.key).decode(),
              "payload": json.dumps({"value_b64": base64.b64encode(r.value).decode()})}
             for n, r in enumerate(records)]  # fmt: skip
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return decode_paths(FORMAT, [path], topic="avro-orders", options={"url": url}, envelope="kcat").events


def test_our_encode_is_read_back_by_confluents_deserializer(registry, tmp_path):
    from tests.formats.test_debezium_avro import avro_message, line

    R.forget()
    schema_id = R.register({"url": registry.url}, f"{TOPIC}-source", envelope_schema())
    path = tmp_path / "day.jsonl"
    path.write_bytes(b"".join(line(avro_message(schema_id, *o[:3])) + b"\n" for o in OPS))
    options = {"url": registry.url}
    events = decode_paths(FORMAT, [path], topic=TOPIC, options=options).events
    messages, skipped = encode_local(events, FORMAT, options)
    assert not skipped and len(messages) == len(OPS)
    _, _, deserializer = _confluent(registry.url)
    for (_, _, message), (op, before, after, *_) in zip(messages, OPS, strict=True):
        record = deserializer(message, _context("value"))
        assert record["op"] == op and record["ts_ms"] == 1704067200456 and record["ts_us"] == 1704067200456789
        assert record["source"]["db"] == "inventory" and record["source"]["pos"] == 154
        assert record["transaction"]["id"] == TX["id"]
        for image, original in (("before", before), ("after", after)):
            assert (record[image] is None) == (original is None)
            if original is not None:
                assert record[image] == _as_confluent_reads(original)


def _as_confluent_reads(row: dict) -> dict:
    """The original values as Confluent's deserializer gives what we wrote: the Decimal's logical type
    applied, a geometry without its SRID (not carried)."""
    out = dict(row)
    scale = next(avro["scale"] for c, _, _, avro, *_ in COLUMNS if c == "amount")
    out["amount"] = Decimal(int.from_bytes(row["amount"], "big", signed=True)).scaleb(-scale)
    out["geo"] = {"wkb": row["geo"]["wkb"], "srid": None}
    out["f32"] = float(np.float32(row["f32"]))  # what a float32 holds of the value written
    return out
