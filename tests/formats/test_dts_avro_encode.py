"""DTS Avro encoder: schemaless Records whose every union member decodes to the same canonical event."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from fastavro.write import Writer

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.dts_avro_records import container_schema, read_record, record_to_fields
from cdc_pipelines.formats.encoding import OlderSchemaMessage, Unsupported
from tests.conftest import resource
from tests.decode.oracles import encode_local
from tests.formats.test_debezium_encode import SAME_FORMAT_FIELDS, same_events
from tests.formats.test_dts_avro import N, _line, _record, _schemaless

# One column per union member (and per way a member reads back: charsets, DATE/TIME/DATETIME/YEAR ...).
MEMBER_FIELDS = [
    ("int", 8, (N + "Integer", {"precision": 20, "value": "10223372036854775806"})),
    ("utf8", 253, (N + "Character", {"charset": "utf8mb4", "value": "héllo 😀".encode()})),
    ("gbk", 253, (N + "Character", {"charset": "gbk", "value": "中文".encode("gbk")})),
    ("bin", 254, (N + "Character", {"charset": "binary", "value": b"\x00\xff"})),
    ("dec", 246, (N + "Decimal", {"value": "-1234567890123456789012345.000000001", "precision": 34, "scale": 9})),
    ("dbl", 5, (N + "Float", {"value": 0.1, "precision": 1, "scale": 1})),
    ("flt", 4, (N + "Float", {"value": 1.5, "precision": 2, "scale": 1})),
    ("ts", 17, (N + "Timestamp", {"timestamp": 1606233662, "millis": 12345})),
    ("d", 10, (N + "DateTime", {"year": 2020, "month": 11, "day": 25, "hour": None, "minute": None,
                                "second": None, "millis": None})),
    ("t", 11, (N + "DateTime", {"year": None, "month": None, "day": None, "hour": 838, "minute": 59,
                                "second": 59, "millis": 1})),
    ("dt", 12, (N + "DateTime", {"year": 2020, "month": 1, "day": 2, "hour": 3, "minute": 4, "second": 5,
                                 "millis": None})),
    ("dt6", 18, (N + "DateTime", {"year": 2020, "month": 1, "day": 2, "hour": 3, "minute": 4, "second": 5,
                                  "millis": 600})),
    ("y", 13, (N + "DateTime", {"year": 2022, "month": None, "day": None, "hour": None, "minute": None,
                                "second": None, "millis": None})),
    ("tz", 0, (N + "TimestampWithTimeZone", {"value": {"year": 2020, "month": 11, "day": 25, "hour": 0, "minute": 1,
                                                       "second": 2, "millis": 12345}, "timezone": "Asia/Shanghai"})),
    ("bgeo", 255, (N + "BinaryGeometry", {"type": "POINT", "value": b"\x01\x02"})),
    ("tgeo", 255, (N + "TextGeometry", {"type": "POINT", "value": "POINT(1 2)"})),
    ("bobj", 252, (N + "BinaryObject", {"type": "BLOB", "value": b"hi"})),
    ("json", 245, (N + "TextObject", {"type": "JSON", "value": '{"a": 1.10}'})),
    ("text", 252, (N + "TextObject", {"type": "TEXT", "value": "long text"})),
    ("enull", 3, (N + "EmptyObject", "NULL")),
    ("null", 3, None),
    ("none", 3, (N + "EmptyObject", "NONE")),
]  # fmt: skip
FIELDS = [{"name": n, "dataTypeNumber": t} for n, t, _ in MEMBER_FIELDS]
ROW = [v for _, _, v in MEMBER_FIELDS]
SET_NOW = (N + "Character", {"charset": "utf8mb4", "value": b"now set"})  # the NONE column gets a value
CHANGED = [(N + "Integer", {"precision": 1, "value": "7"}), *ROW[1:-1], SET_NOW]
RECORDS = [
    _record(operation="INSERT", fields=FIELDS, beforeImages=None, afterImages=ROW),
    _record(operation="UPDATE", id=6, fields=FIELDS, beforeImages=ROW, afterImages=CHANGED),
    _record(operation="DELETE", id=7, fields=FIELDS, beforeImages=CHANGED, afterImages=None),
    _record(operation="INIT", id=8, fields=FIELDS, beforeImages=None, afterImages=ROW, objectName="my\\u002Edb.t"),
    _record(operation="COMMIT", id=9, fields=None, beforeImages=None, afterImages=None, objectName=None),
]


def _varlong(n: int) -> bytes:
    n, out = (n << 1) ^ (n >> 63), bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes([*out, n])


def _write_containers(messages: list[bytes], folder: Path) -> None:
    """Messages as `.avro` containers, as `write_encoded` writes DTS Avro: records byte for byte, those of
    older writers (no `bornTimestamp`) in a container of that schema."""
    folder.mkdir(parents=True, exist_ok=True)
    for older, name in ((False, "part-00000.avro"), (True, "part-00000-older-writer.avro")):
        records = [m for m in messages if isinstance(m, OlderSchemaMessage) == older]
        if records:
            with open(folder / name, "wb") as fh:
                sync = Writer(fh, container_schema(older)).sync_marker  # writes the header
                data = b"".join(records)
                fh.write(_varlong(len(records)) + _varlong(len(data)) + data + sync)


@pytest.fixture(scope="module")
def roundtrip(decode, tmp_path_factory):
    """roundtrip(source_id, path, "dts-avro") -> (events, re-decoded events, counts), in process: decode,
    `encode_local`, the messages written as containers (`_write_containers`), decoded again."""

    def run(source_id: str, path, target_id: str, source_options=None, decode_options=None, **target_options):
        events, _, _ = decode(source_id, path, **(source_options or {}))
        messages, skipped = encode_local(events, target_id, target_options)
        out = tmp_path_factory.mktemp("roundtrip") / target_id
        _write_containers([m for _, _, m in messages], out)
        again, _, _ = decode(target_id, out, **(decode_options or {}))
        encoded = sum(1 for _, part, _ in messages if part == 0)
        return events, again, {"written": len(messages), "skipped": len(skipped), "encoded": encoded}

    return run


@pytest.fixture(scope="module")
def members_dir(tmp_path_factory):
    """The DTS Avro seed plus a Record per op with every union member, and one from an older writer."""
    root = tmp_path_factory.mktemp("dts_members")
    shutil.copy(resource("dts-avro", "seed.jsonl"), root / "a-seed.jsonl")
    old = {k: v for k, v in RECORDS[0].items() if k != "bornTimestamp"}
    lines = [_line(_schemaless(r), i) for i, r in enumerate(RECORDS)] + [_line(_schemaless(old, old=True), 99)]
    (root / "b-members.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_same_format_round_trip_is_exact(roundtrip, members_dir):
    events, again, counts = roundtrip("dts-avro", members_dir, "dts-avro")
    assert len(events) == 11 and counts == {"written": 11, "skipped": 0, "encoded": 11}
    assert same_events(again, events, SAME_FORMAT_FIELDS)
    insert = next(e for e in again if e["seq"] == "5" and e["source_file"].endswith(".avro") and e["after"])
    assert insert["meta"]["cdc.avro_value_types"]
    # the older writer's record (no bornTimestamp) is written to a container of that schema
    older = [e for e in again if "bornTimestamp" not in e["meta"]]
    assert len(older) == 1 and older[0]["source_file"].endswith("part-00000-older-writer.avro")


def _event(record: dict) -> dict:
    """A canonical-like event of one Record, as an encoder gets it (times as datetimes)."""
    fields = record_to_fields(record)
    process = record.get("processTimestamps")
    return fields | {
        "event_id": "0" * 32,
        "source_format": "dts-avro",
        "event_time": dt.datetime.fromtimestamp(record["sourceTimestamp"], dt.UTC),
        "sync_time": dt.datetime.fromtimestamp(max(process) / 1000, dt.UTC) if process else None,
    }


def _plain(value):
    """A union value without the precision/scale fields the canonical table does not keep."""
    if isinstance(value, tuple) and isinstance(value[1], dict):
        return value[0], {k: v for k, v in value[1].items() if k not in ("precision", "scale")}
    return value


@pytest.mark.parametrize("record", RECORDS, ids=[r["operation"] for r in RECORDS])
def test_every_union_member_is_written_back(record):
    """Record -> canonical -> Record gives the same member for every column (NONE included)."""
    (payload,) = get_codec("dts-avro").encode(_event(record), {})
    again = read_record(payload)
    for key in ("beforeImages", "afterImages"):
        assert [_plain(v) for v in again[key] or []] == [_plain(v) for v in record[key] or []], key
    same = ("version", "id", "sourceTimestamp", "sourcePosition", "safeSourcePosition", "sourceTxid", "source",
            "operation", "objectName", "processTimestamps", "tags", "fields", "bornTimestamp")  # fmt: skip
    assert {k: again[k] for k in same} == {k: record[k] for k in same}


def test_values_from_other_formats():
    event = {
        "event_id": "f" * 32, "source_format": "oms-canal", "op": "UPDATE", "raw_op": "UPDATE", "db": "my.db",
        "db_schema": None, "table_name": "t", "event_time": dt.datetime(2024, 1, 2, 3, 4, 5, 678000, dt.UTC),
        "sync_time": None, "tx_id": None, "seq": None, "position": None, "pk_columns": ["id"],
        "before": {"id": "1", "ok": "true", "z": "2020-11-25 00:01:02 +08:00", "raw": "AP8=", "n": "12.50"},
        "after": {"id": "1", "ok": "false", "z": None, "raw": "AP8=", "n": "12.50", "added": "x"},
        "column_types": {"id": "INT", "ok": "BOOLEAN", "z": "ZONED_DATETIME", "raw": "BYTES", "n": "UNKNOWN",
                         "added": "STRING"},
        "source_types": {"id": "int(11)"}, "meta": {"cdc.json_numbers": '["id","n"]'},
    }  # fmt: skip
    record = read_record(get_codec("dts-avro").encode(event, {})[0])
    assert (record["objectName"], record["sourceTimestamp"], record["bornTimestamp"]) == (
        "my\\u002Edb.t", 1704164645, 1704164645678,
    )  # fmt: skip
    assert record["id"] == int("f" * 15, 16) and record["tags"] == {"pk_uk_info": '{"PRIMARY":["id"]}'}
    assert [f["dataTypeNumber"] for f in record["fields"]] == [8, 1, 17, 252, 253, 253]
    before = dict(zip([f["name"] for f in record["fields"]], record["beforeImages"], strict=True))
    after = dict(zip([f["name"] for f in record["fields"]], record["afterImages"], strict=True))
    assert before["ok"] == (N + "Integer", {"precision": 1, "value": "1"})  # MySQL has no boolean
    assert before["z"][0] == N + "TimestampWithTimeZone" and before["z"][1]["timezone"] == "+08:00"
    assert before["raw"] == (N + "BinaryObject", {"type": "BLOB", "value": b"\x00\xff"})
    assert before["n"] == (N + "Decimal", {"value": "12.50", "precision": 4, "scale": 2})  # a JSON number
    assert (before["added"], after["z"]) == ((N + "EmptyObject", "NONE"), None)
    with pytest.raises(Unsupported):
        get_codec("dts-avro").encode(event | {"op": "UPSERT"}, {})


@pytest.mark.parametrize(
    ("source", "path"),
    [("dataworks-json", resource("dataworks-json")), ("oms-default", resource("oms-default", "seed.jsonl"))],
)
def test_cross_format_round_trip(roundtrip, source, path):
    """Every event of these seeds is carried (rows, heartbeats, DDL text)."""
    events, again, counts = roundtrip(source, path, "dts-avro")
    assert counts["skipped"] == 0 and counts["written"] == len(events) == len(again)
    assert same_events(again, events, ("op", "db", "table_name", "before", "after", "ddl", "pk_columns", "position"))
