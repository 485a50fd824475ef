"""debezium-avro-confluent: Confluent-framed Debezium Avro, its schemas in a registry (here an in-process one).

Each column of `COLUMNS` is one Debezium logical type: its Avro schema as Debezium's Avro converter writes
it, the value written (by fastavro, not by the project), the same value as Debezium's JSON converter writes
it (`decimal.format=NUMERIC`, bytes in base64), and the canonical text expected. A message of each op is
decoded from Avro and from the equivalent JSON (`oms-debezium`, `binary=base64`): the events are equal,
field for field.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import subprocess
import sys

import fastavro
import pytest

from cdc_pipelines.decode.messages import decode_message
from cdc_pipelines.formats import registry as R
from cdc_pipelines.formats import resolve_codec
from cdc_pipelines.formats.base import Reject
from cdc_pipelines.formats.debezium_avro import decode_key
from tests.conftest import SAME_FORMAT_FIELDS, carried
from tests.decode.oracles import decode_paths
from tests.formats.fake_registry import FakeRegistry

FORMAT = "debezium-avro-confluent"
WKB = bytes.fromhex("0101000000000000000000f03f0000000000000040")  # POINT(1 2)


def _named(avro: str, connect_name: str, **extra) -> dict:
    return {"type": avro, "connect.version": 1, "connect.name": connect_name, **extra}


DECIMAL = _named("bytes", "org.apache.kafka.connect.data.Decimal", scale=2, precision=10, logicalType="decimal",
                 **{"connect.parameters": {"scale": "2", "connect.decimal.precision": "10"}})  # fmt: skip
VARIABLE = _named("record", "io.debezium.data.VariableScaleDecimal", name="VariableScaleDecimal",
                  namespace="io.debezium.data", fields=[{"name": "scale", "type": "int"},
                                                        {"name": "value", "type": "bytes"}])  # fmt: skip
GEOMETRY_FIELDS = [{"name": "wkb", "type": "bytes"}, {"name": "srid", "type": ["null", "int"], "default": None}]
GEOMETRY = _named("record", "io.debezium.data.geometry.Geometry", name="Geometry",
                  namespace="io.debezium.data.geometry", fields=GEOMETRY_FIELDS)  # fmt: skip
# (column, Connect type, Connect name, Avro schema, Avro value, JSON value text, canonical text)
COLUMNS = [
    ("id", "int64", None, "long", 1001, "1001", "1001"),
    ("small", "int16", None, {"type": "int", "connect.type": "int16"}, -3, "-3", "-3"),
    ("flag", "boolean", None, "boolean", True, "true", "true"),
    ("name", "string", None, "string", "Ünï", '"Ünï"', "Ünï"),
    ("f32", "float32", None, "float", 0.1, "0.1", "0.1"),
    ("f64", "float64", None, "double", 2.5e-05, "2.5e-05", "2.5e-05"),
    ("raw", "bytes", None, "bytes", b"\x00\xff", '"AP8="', "AP8="),
    ("d", "int32", "io.debezium.time.Date", _named("int", "io.debezium.time.Date"), 19723, "19723", "2024-01-01"),
    ("t", "int32", "io.debezium.time.Time", _named("int", "io.debezium.time.Time"), 3723004, "3723004",
     "01:02:03.004"),
    ("mt", "int64", "io.debezium.time.MicroTime", _named("long", "io.debezium.time.MicroTime"), 3723000005,
     "3723000005", "01:02:03.000005"),
    ("nt", "int64", "io.debezium.time.NanoTime", _named("long", "io.debezium.time.NanoTime"), 3723000000007,
     "3723000000007", "01:02:03.000000007"),
    ("ts", "int64", "io.debezium.time.Timestamp", _named("long", "io.debezium.time.Timestamp"), 1704067200123,
     "1704067200123", "2024-01-01 00:00:00.123"),
    ("mts", "int64", "io.debezium.time.MicroTimestamp", _named("long", "io.debezium.time.MicroTimestamp"),
     1704067200123456, "1704067200123456", "2024-01-01 00:00:00.123456"),
    ("nts", "int64", "io.debezium.time.NanoTimestamp", _named("long", "io.debezium.time.NanoTimestamp"),
     1704067200123456789, "1704067200123456789", "2024-01-01 00:00:00.123456789"),
    ("zts", "string", "io.debezium.time.ZonedTimestamp", _named("string", "io.debezium.time.ZonedTimestamp"),
     "2024-01-01T08:00:00.5Z", '"2024-01-01T08:00:00.5Z"', "2024-01-01T08:00:00.5Z"),
    ("zt", "string", "io.debezium.time.ZonedTime", _named("string", "io.debezium.time.ZonedTime"),
     "10:15:30.123Z", '"10:15:30.123Z"', "10:15:30.123"),
    ("y", "int32", "io.debezium.time.Year", _named("int", "io.debezium.time.Year"), 2024, "2024", "2024"),
    ("amount", "bytes", "org.apache.kafka.connect.data.Decimal", DECIMAL, (1250).to_bytes(2, "big"), "12.50",
     "12.50"),
    ("vsd", "struct", "io.debezium.data.VariableScaleDecimal", VARIABLE,
     {"scale": 3, "value": (-123456).to_bytes(3, "big", signed=True)},
     '{"scale":3,"value":"' + base64.b64encode((-123456).to_bytes(3, "big", signed=True)).decode() + '"}',
     "-123.456"),
    ("doc", "string", "io.debezium.data.Json", _named("string", "io.debezium.data.Json"), '{"k": [1, 2.50]}',
     json.dumps('{"k": [1, 2.50]}'), '{"k": [1, 2.50]}'),
    ("color", "string", "io.debezium.data.Enum", _named("string", "io.debezium.data.Enum"), "red", '"red"', "red"),
    ("colors", "string", "io.debezium.data.EnumSet", _named("string", "io.debezium.data.EnumSet"), "red,blue",
     '"red,blue"', "red,blue"),
    ("bits", "bytes", "io.debezium.data.Bits", _named("bytes", "io.debezium.data.Bits"), b"\x05", '"BQ=="', "BQ=="),
    ("uid", "string", "io.debezium.data.Uuid", _named("string", "io.debezium.data.Uuid"),
     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", '"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"',
     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ("geo", "struct", "io.debezium.data.geometry.Geometry", GEOMETRY, {"wkb": WKB, "srid": 4326},
     '{"wkb":"' + base64.b64encode(WKB).decode() + '","srid":4326}', base64.b64encode(WKB).decode()),
    ("missing", "string", None, "string", None, "null", None),
]  # fmt: skip
EXPECTED_TYPES = {
    "id": "INT", "small": "INT", "flag": "BOOLEAN", "name": "STRING", "f32": "FLOAT", "f64": "DOUBLE", "raw": "BYTES",
    "d": "DATE", "t": "TIME", "mt": "TIME", "nt": "TIME", "ts": "DATETIME", "mts": "DATETIME", "nts": "DATETIME",
    "zts": "TIMESTAMP", "zt": "TIME", "y": "INT", "amount": "DECIMAL", "vsd": "DECIMAL", "doc": "JSON",
    "color": "STRING", "colors": "STRING", "bits": "BYTES", "uid": "STRING", "geo": "BYTES", "missing": "STRING",
}  # fmt: skip

SOURCE_FIELDS = [("version", "string"), ("connector", "string"), ("name", "string"), ("ts_ms", "long"),
                 ("db", "string"), ("table", ["null", "string"]), ("server_id", "long"), ("file", "string"),
                 ("pos", "long"), ("row", "int")]  # fmt: skip
SOURCE = {"type": "record", "name": "Source", "namespace": "io.debezium.connector.mysql",
          "fields": [{"name": n, "type": t} for n, t in SOURCE_FIELDS]}  # fmt: skip
TRANSACTION = {"type": "record", "name": "block", "namespace": "event", "fields": [
    {"name": "id", "type": "string"}, {"name": "total_order", "type": "long"},
    {"name": "data_collection_order", "type": "long"}]}  # fmt: skip


def envelope_schema(columns=COLUMNS) -> dict:
    value = {"type": "record", "name": "Value", "fields": [
        {"name": c, "type": ["null", avro], "default": None} for c, _, _, avro, *_ in columns]}  # fmt: skip
    return {"type": "record", "name": "Envelope", "namespace": "shop.inventory.orders", "fields": [
        {"name": "before", "type": ["null", value], "default": None},
        {"name": "after", "type": ["null", "Value"], "default": None},
        {"name": "source", "type": SOURCE}, {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None},
        {"name": "ts_us", "type": ["null", "long"], "default": None},
        {"name": "transaction", "type": ["null", TRANSACTION], "default": None}],
        "connect.name": "shop.inventory.orders.Envelope"}  # fmt: skip


def connect_schema(columns=COLUMNS) -> dict:
    """The Connect schema Debezium's JSON converter writes for the same table."""
    row = [{"type": kind, "optional": True, "field": c, **({"name": name} if name else {})}
           for c, kind, name, *_ in columns]  # fmt: skip
    return {
        "type": "struct",
        "fields": [
            {"type": "struct", "optional": True, "field": "before", "fields": row},
            {"type": "struct", "optional": True, "field": "after", "fields": row},
        ],
    }


SOURCE_VALUE = {"version": "2.7.0.Final", "connector": "mysql", "name": "shop", "ts_ms": 1704067200000,
                "db": "inventory", "table": "orders", "server_id": 223344, "file": "mysql-bin.000003", "pos": 154,
                "row": 0}  # fmt: skip
TX = {"id": "file=mysql-bin.000003,pos=154", "total_order": 1, "data_collection_order": 1}


def avro_row(**changes) -> dict:
    return {c: v for c, _, _, _, v, *_ in COLUMNS} | changes


def json_row(**changes) -> str:
    values = {c: j for c, _, _, _, _, j, _ in COLUMNS} | {k: json.dumps(v) for k, v in changes.items()}
    return "{" + ",".join(f'"{c}":{j}' for c, j in values.items()) + "}"


def framed(schema_id: int, schema: dict, record: dict) -> bytes:
    buf = io.BytesIO()
    buf.write(struct.pack(">bI", 0, schema_id))
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return buf.getvalue()


def line(value: bytes) -> bytes:
    return json.dumps({"value_b64": base64.b64encode(value).decode()}).encode()


# one message per op: (op, before, after) as Avro records and as JSON text
OPS = [
    ("c", None, avro_row(), "null", json_row()),
    ("u", avro_row(name="old"), avro_row(name="new"), json_row(name="old"), json_row(name="new")),
    ("d", avro_row(), None, json_row(), "null"),
    ("r", None, avro_row(id=7), "null", json_row(id=7)),
]


def avro_message(schema_id: int, op: str, before, after) -> bytes:
    record = {"before": before, "after": after, "source": SOURCE_VALUE, "op": op, "ts_ms": 1704067200456,
              "ts_us": 1704067200456789, "transaction": TX}  # fmt: skip
    return framed(schema_id, envelope_schema(), record)


def json_message(op: str, before: str, after: str) -> bytes:
    payload = (f'{{"before":{before},"after":{after},"source":{json.dumps(SOURCE_VALUE)},"op":"{op}",'
               f'"ts_ms":1704067200456,"ts_us":1704067200456789,"transaction":{json.dumps(TX)}}}')  # fmt: skip
    return f'{{"schema":{json.dumps(connect_schema())},"payload":{payload}}}'.encode()


@pytest.fixture(scope="module")
def registry():
    running = FakeRegistry()
    yield running
    running.stop()
    R.forget()


@pytest.fixture
def codec(registry):
    return resolve_codec(FORMAT, {"url": registry.url})


def _decoded(codec, message: bytes) -> dict:
    return decode_message(codec.codec, message, codec.options)[0]


@pytest.mark.parametrize(("op", "before", "after", "json_before", "json_after"), OPS, ids=[o[0] for o in OPS])
def test_every_logical_type_gives_the_rows_of_the_same_change_in_json(registry, codec, op, before, after,
                                                                      json_before, json_after):  # fmt: skip
    schema_id = registry.add(envelope_schema())
    event = _decoded(codec, line(avro_message(schema_id, op, before, after)))
    json_codec = resolve_codec("oms-debezium", {"binary": "base64"})
    assert event == _decoded(json_codec, json_message(op, json_before, json_after))
    image = event["after"] if after is not None else event["before"]
    expected = {c: text for c, *_, text in COLUMNS} | ({"id": "7"} if op == "r" else {})
    assert image == (expected | {"name": "new"} if op == "u" else expected)
    assert event["column_types"] == EXPECTED_TYPES
    assert (event["op"], event["db"], event["table_name"], event["position"], event["tx_id"]) == (
        {"c": "INSERT", "u": "UPDATE", "d": "DELETE", "r": "INSERT"}[op], "inventory", "orders",
        "mysql-bin.000003:154", TX["id"])  # fmt: skip
    assert (event["event_time"], event["sync_time"]) == (1704067200000000, 1704067200456000)
    assert event["meta"]["ts_us"] == "1704067200456789" and event["meta"]["source.server_id"] == "223344"


def test_decode_encode_round_trip_is_exact(registry, roundtrip, tmp_path):
    schema_id = registry.add(envelope_schema())
    path = tmp_path / "day.jsonl"
    path.write_bytes(b"".join(line(avro_message(schema_id, *o[:3])) + b"\n" for o in OPS))
    options = {"url": registry.url}
    events, again, counts = roundtrip(FORMAT, path, FORMAT, source_options=options, decode_options=options, **options)
    assert counts == {"written": 4, "skipped": 0, "encoded": 4}
    assert [carried(e, SAME_FORMAT_FIELDS) for e in again] == [carried(e, SAME_FORMAT_FIELDS) for e in events]
    assert "t-value" in registry.subjects  # the topic-name strategy: <topic>-value


def test_json_changes_encoded_as_avro_read_back_the_same(registry, roundtrip, tmp_path):
    """oms-debezium JSON (with its schema) -> Avro -> the same rows: the encoder's Connect types become Avro ones."""
    path = tmp_path / "day.jsonl"
    path.write_bytes(b"".join(json_message(*(o[0], *o[3:])) + b"\n" for o in OPS))
    options = {"url": registry.url}
    events, again, counts = roundtrip("oms-debezium", path, FORMAT, source_options={"binary": "base64"},
                                      decode_options=options, subject="orders-avro", **options)  # fmt: skip
    assert counts["skipped"] == 0
    fields = [f for f in SAME_FORMAT_FIELDS if f != "source_types"]  # VariableScaleDecimal etc. keep their names
    assert [carried(e, fields) for e in again] == [carried(e, fields) for e in events]
    assert "orders-avro" in registry.subjects


def test_a_key_through_the_registry_gives_its_fields_for_keys_from_kafka(registry, codec):
    key_schema = {"type": "record", "name": "Key", "namespace": "shop.inventory.orders",
                  "fields": [{"name": "id", "type": "long"}, {"name": "region", "type": "string"}]}  # fmt: skip
    key = base64.b64encode(framed(registry.add(key_schema, "t-key"), key_schema, {"id": 1001, "region": "eu"}))
    assert decode_key(key.decode(), codec.options) == '{"id":1001,"region":"eu"}'
    assert decode_key("not a framed key", codec.options) == "not a framed key"


def test_kcat_lines_carry_the_decoded_key_and_tombstones_count(registry, codec, tmp_path):
    key_schema = {"type": "record", "name": "Key", "fields": [{"name": "id", "type": "long"}]}
    key = base64.b64encode(framed(registry.add(key_schema, "t-key"), key_schema, {"id": 1001})).decode()
    value = base64.b64encode(avro_message(registry.add(envelope_schema()), "c", None, avro_row())).decode()
    kcat = [{"topic": "t", "partition": 0, "offset": 5, "tstype": "create", "ts": 1704067200500, "key": key,
             "payload": json.dumps({"value_b64": value})},
            {"topic": "t", "partition": 0, "offset": 6, "tstype": "create", "ts": 1704067200501, "key": key,
             "payload": None}]  # fmt: skip
    path = tmp_path / "kcat.jsonl"
    path.write_text("".join(json.dumps(k) + "\n" for k in kcat))
    decoded = decode_paths(FORMAT, [path], options=codec.options, envelope="kcat")
    assert [e["meta"]["cdc.kafka.key"] for e in decoded.events] == ['{"id":1001}'] * 2
    assert [e["op"] for e in decoded.events] == ["INSERT", "OTHER"] and not decoded.rejects


def _reason(codec, message: bytes) -> str:
    with pytest.raises(Reject) as why:
        decode_message(codec.codec, message, codec.options)
    return str(why.value)


def test_rejects_say_why(registry, codec):
    schema_id = registry.add(envelope_schema())
    good = avro_message(schema_id, "c", None, avro_row())
    not_framed = "not the Confluent wire format (magic byte 0 and a 4-byte schema id)"
    assert _reason(codec, line(b"\x01" + good[1:])) == not_framed
    assert _reason(codec, line(b"\x00\x00")) == not_framed
    unknown = line(struct.pack(">bI", 0, 999999) + good[5:])
    assert _reason(codec, unknown) == "schema id 999999 is not in the schema registry"
    assert _reason(codec, line(good[:40])).startswith(f"the record cannot be read with schema id {schema_id}:")
    assert _reason(codec, line(good + b"\x00")) == f"the record read with schema id {schema_id} leaves 1 bytes unread"
    assert _reason(codec, b'{"value": 1}') == "no value_b64 field"
    assert _reason(codec, b'{"value_b64": "%%%"}').startswith("value_b64 is not base64")
    bad_op = framed(schema_id, envelope_schema(), {"before": None, "after": None, "source": SOURCE_VALUE, "op": "x"})
    assert _reason(codec, line(bad_op)) == "unknown op 'x'"


def test_a_registry_that_cannot_be_reached_stops_the_decode(registry, tmp_path):
    path = tmp_path / "day.jsonl"
    path.write_bytes(line(avro_message(registry.add(envelope_schema()), "c", None, avro_row())) + b"\n")
    R.forget()
    with pytest.raises(R.RegistryError, match=r"schema registry http://127.0.0.1:9 cannot be reached"):
        decode_paths(FORMAT, [path], options={"url": "http://127.0.0.1:9"})


def test_the_cli_exits_2_naming_the_registry_with_nothing_written(registry, tmp_path):
    path = tmp_path / "day.jsonl"
    path.write_bytes(line(avro_message(registry.add(envelope_schema()), "c", None, avro_row())) + b"\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "cdc_pipelines.cli", "decode", "--format", FORMAT, "--option", "url=http://127.0.0.1:9",
         "--option", "basic-auth.user-info=reader:Pa55-word", "--out", str(out), "--dt", "2024-01-01", str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "schema registry http://127.0.0.1:9 cannot be reached" in done.stderr
    assert "Pa55-word" not in done.stderr + done.stdout
    assert not (out / "changes").exists() or not any((out / "changes").rglob("*.parquet"))


def test_credentials_are_sent_from_the_environment_and_never_shown(registry, monkeypatch):
    monkeypatch.setenv("REGISTRY_SECRET", "s3cr3t")
    options = {"url": registry.url, "basic-auth.user-info": "reader:${REGISTRY_SECRET}"}
    R.forget()
    R.writer_schema(options, registry.add(envelope_schema()))
    assert registry.authorizations[-1] == "Basic " + base64.b64encode(b"reader:s3cr3t").decode()
    R.forget()
    R.writer_schema({"url": registry.url, "bearer-auth.token": "${REGISTRY_SECRET}"}, registry.add(envelope_schema()))
    assert registry.authorizations[-1] == "Bearer s3cr3t"
    from cdc_pipelines.extract.kafka_source import redacted

    assert redacted(options)["basic-auth.user-info"] == "*****"
    assert redacted({"bearer-auth.token": "x"})["bearer-auth.token"] == "*****"


def test_a_spark_run_asks_the_registry_before_any_task(registry):
    """The Spark paths (a decode of files or of a Kafka day, an encode) check the registry first: a task's
    error would not reach the command as a registry error."""
    codec = resolve_codec(FORMAT, {"url": registry.url})
    codec.codec.check_ready(codec.options)
    with pytest.raises(R.RegistryError, match=r"schema registry http://127.0.0.1:9 cannot be reached"):
        codec.codec.check_ready(resolve_codec(FORMAT, {"url": "http://127.0.0.1:9"}).options)
    with pytest.raises(R.RegistryError, match=r"no schema registry: the format's option `url` is not set"):
        codec.codec.check_ready(resolve_codec(FORMAT, {}).options)


def test_the_kafka_reader_gives_a_binary_key_in_base64():
    """A Kafka record as its kcat line (what both Kafka readers make): the key of a format with `decode_key` is
    its bytes in base64 (an Avro key is no text), the value a `value_b64` payload; a JSON format's key stays text."""
    from cdc_pipelines.extract.kafka_lines import kcat_line
    from cdc_pipelines.formats import get_codec

    key, value = b"\x00\x00\x00\x00\x65\xd2\x0f", b"\x00\x00\x00\x00\x66\x02"
    record = {"topic": "t", "partition": 0, "offset": 5, "timestampType": 0, "ts": 0, "headers": [], "key": key,
              "value": value}  # fmt: skip

    def line(format_id: str) -> dict:
        codec = get_codec(format_id)
        return json.loads(kcat_line(record, codec.binary_messages, codec.decode_key is not None))

    avro = line(FORMAT)
    assert base64.b64decode(avro["key"]) == key
    assert json.loads(avro["payload"]) == {"value_b64": base64.b64encode(value).decode()}
    assert "value_b64" not in line("oms-debezium")["payload"]


def test_a_catalog_topic_reads_kcat_extracts_with_keys_from_kafka_and_secrets_by_name(tmp_path):
    from cdc_pipelines.extract.catalog import load_catalog

    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "topics:\n"
        "  - name: orders\n"
        f"    format: {FORMAT}\n"
        "    envelope: kcat\n"
        "    keys_from: kafka\n"
        "    options: {url: 'http://registry:8081', basic-auth.user-info: 'reader:${REGISTRY_PASSWORD}'}\n"
    )
    (topic,) = load_catalog(catalog)
    assert (topic.envelope, topic.keys_from) == ("kcat", "kafka")
    assert topic.options["basic-auth.user-info"] == "reader:${REGISTRY_PASSWORD}"  # read when a request is made
