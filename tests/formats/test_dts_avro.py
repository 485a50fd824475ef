"""DTS Avro: every value union type to canonical text, JSON-lines and container inputs, bad input."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json

import fastavro
import pytest

from cdc_pipelines.formats.dts_avro_records import container_schema, convert_value, record_schemas, split_object_name

N = "com.alibaba.dts.formats.avro."
FIELDS = [
    {"name": "id", "dataTypeNumber": 8}, {"name": "name", "dataTypeNumber": 253},
    {"name": "price", "dataTypeNumber": 246}, {"name": "ts", "dataTypeNumber": 17},
    {"name": "d", "dataTypeNumber": 10}, {"name": "note", "dataTypeNumber": 252},
]  # fmt: skip
ROW = [
    (N + "Integer", {"precision": 20, "value": "10223372036854775806"}),
    (N + "Character", {"charset": "utf8mb4", "value": "héllo".encode()}),
    (N + "Decimal", {"value": "1234567890123456789012345.000000001", "precision": 40, "scale": 9}),
    (N + "Timestamp", {"timestamp": 1606233662, "millis": 12345}),
    (
        N + "DateTime",
        {"year": 2020, "month": 11, "day": 25, "hour": None, "minute": None, "second": None, "millis": None},
    ),
    (N + "EmptyObject", "NULL"),
]
CANONICAL_ROW = {
    "id": "10223372036854775806", "name": "héllo", "price": "1234567890123456789012345.000000001",
    "ts": "2020-11-24T16:01:02.012345Z", "d": "2020-11-25", "note": None,
}  # fmt: skip
BASE = {
    "version": 1, "id": 5, "sourceTimestamp": 1700000000, "sourcePosition": "4567@mysql-bin.000003",
    "safeSourcePosition": "4500@mysql-bin.000003", "sourceTxid": "tx-9",
    "source": {"sourceType": "MySQL", "version": "8.0.32"}, "objectName": "shop.orders",
    "processTimestamps": [1700000000123, 1700000000200], "tags": {"pk_uk_info": '{"PRIMARY":["id"]}'},
    "fields": FIELDS, "bornTimestamp": 1700000000001,
}  # fmt: skip


def _record(**changes):
    return {**BASE, **changes}


def _schemaless(record, old=False):
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, record_schemas()[1 if old else 0], record)
    return buf.getvalue()


def _line(payload: bytes, offset: int) -> str:
    return json.dumps(
        {"topic": "dts", "partition": 0, "offset": offset, "value_b64": base64.b64encode(payload).decode()}
    )


@pytest.mark.parametrize(
    ("value", "dtype", "expected"),
    [
        ((N + "Float", {"value": 0.1, "precision": 12, "scale": 0}), 5, ("0.1", "DOUBLE", "Float")),
        ((N + "Float", {"value": 1.5, "precision": 12, "scale": 0}), 4, ("1.5", "FLOAT", "Float")),
        ((N + "Character", {"charset": "gbk", "value": "中".encode("gbk")}), 253, ("中", "STRING", "Character:gbk")),
        ((N + "Character", {"charset": "binary", "value": b"\x00\xff"}), 254, ("AP8=", "BYTES", "Character:binary")),
        ((N + "DateTime", {"year": None, "month": None, "day": None, "hour": 838, "minute": 59, "second": 59,
                           "millis": 1}), 11, ("838:59:59.000001", "TIME", "DateTime")),
        ((N + "DateTime", {"year": 2020, "month": 1, "day": 2, "hour": 3, "minute": 4, "second": 5, "millis": None}),
         12, ("2020-01-02 03:04:05", "DATETIME", "DateTime")),
        ((N + "DateTime", {"year": 2022, "month": None, "day": None, "hour": None, "minute": None, "second": None,
                           "millis": None}), 13, ("2022", "INT", "DateTime")),
        ((N + "TimestampWithTimeZone", {"value": {"year": 2020, "month": 11, "day": 25, "hour": 0, "minute": 1,
          "second": 2, "millis": 12345}, "timezone": "Asia/Shanghai"}), 0,
         ("2020-11-25 00:01:02.012345 Asia/Shanghai", "ZONED_DATETIME", "TimestampWithTimeZone")),
        ((N + "BinaryGeometry", {"type": "POINT", "value": b"\x01\x02"}), 255,
         ("AQI=", "BYTES", "BinaryGeometry:POINT")),
        ((N + "TextGeometry", {"type": "POINT", "value": "POINT(1 2)"}), 255,
         ("POINT(1 2)", "STRING", "TextGeometry:POINT")),
        ((N + "BinaryObject", {"type": "BLOB", "value": b"hi"}), 252, ("aGk=", "BYTES", "BinaryObject:BLOB")),
        ((N + "TextObject", {"type": "JSON", "value": '{"a": 1.10}'}), 245, ('{"a": 1.10}', "JSON", "TextObject:JSON")),
        ((N + "EmptyObject", "NONE"), 3, (None, "UNKNOWN", "EmptyObject:NONE")),
        (None, 3, (None, "UNKNOWN", "null")),
    ],
)  # fmt: skip
def test_convert_value(value, dtype, expected):
    assert convert_value(value, dtype) == expected


def test_object_names():
    assert split_object_name("db.table") == ("db", None, "table")
    assert split_object_name("db.schema.table") == ("db", "schema", "table")
    assert split_object_name("my\\u002Edb.t\\u002E1") == ("my.db", None, "t.1")
    assert split_object_name(None) == (None, None, None)


@pytest.fixture(scope="module")
def extract(tmp_path_factory):
    root = tmp_path_factory.mktemp("dts")
    second = [v if i != 1 else (N + "Character", {"charset": "utf8mb4", "value": b"world"}) for i, v in enumerate(ROW)]
    second[5] = (N + "EmptyObject", "NONE")
    records = [
        _record(operation="INSERT", beforeImages=None, afterImages=ROW),
        _record(operation="UPDATE", id=6, beforeImages=ROW, afterImages=second),
        _record(operation="DELETE", id=7, beforeImages=second, afterImages=None),
        _record(operation="DDL", id=8, fields=None, beforeImages=None, afterImages="ALTER TABLE orders ADD x INT"),
        _record(operation="HEARTBEAT", id=9, objectName=None, fields=None, beforeImages=None, afterImages=None),
        _record(operation="BEGIN", id=10, fields=None, beforeImages=None, afterImages=None),
    ]
    old = {k: v for k, v in records[0].items() if k != "bornTimestamp"}
    lines = [_line(_schemaless(r), i) for i, r in enumerate(records)]
    lines += [_line(_schemaless(old, old=True), 100), _line(b"garbage!", 101), '{"offset": 102}', "not json"]
    (root / "messages.jsonl").write_text("\n".join(lines) + "\n")
    return root, records


def test_messages_in_json_lines(decode, extract):
    root, _ = extract
    events, rejects, decoded = decode("dts-avro", root / "messages.jsonl")
    ops = [(e["source_line"], e["op"], e["raw_op"]) for e in events]
    assert ops == [(1, "INSERT", "INSERT"), (2, "UPDATE", "UPDATE"), (3, "DELETE", "DELETE"), (4, "DDL", "DDL"),
                   (5, "HEARTBEAT", "HEARTBEAT"), (6, "TX_BEGIN", "BEGIN"), (7, "INSERT", "INSERT")]  # fmt: skip
    insert, update, delete, ddl, heartbeat, _, old = events
    assert insert["after"] == CANONICAL_ROW and insert["before"] is None
    assert update["before"] == CANONICAL_ROW
    # EmptyObject NONE leaves the column out; NULL is a null value
    assert update["after"] == {k: v for k, v in CANONICAL_ROW.items() if k != "note"} | {"name": "world"}
    assert update["meta"]["cdc.none_columns"] == '["note"]'
    assert delete["before"] == update["after"]
    assert insert["column_types"] == {
        "id": "INT", "name": "STRING", "price": "DECIMAL", "ts": "TIMESTAMP", "d": "DATE", "note": "UNKNOWN"
    }  # fmt: skip
    assert insert["source_types"] == {f["name"]: str(f["dataTypeNumber"]) for f in FIELDS}
    assert (insert["db"], insert["table_name"], insert["pk_columns"]) == ("shop", "orders", ["id"])
    assert (insert["event_time"], insert["event_time_unit"]) == (dt.datetime(2023, 11, 14, 22, 13, 20), "s")
    assert insert["sync_time"] == dt.datetime(2023, 11, 14, 22, 13, 20, 200000)
    assert (insert["tx_id"], insert["seq"], insert["position"]) == ("tx-9", "5", "4567@mysql-bin.000003")
    assert insert["meta"]["bornTimestamp"] == "1700000000001" and "bornTimestamp" not in old["meta"]
    assert old["after"] == CANONICAL_ROW
    assert (ddl["ddl"], ddl["before"], ddl["after"]) == ("ALTER TABLE orders ADD x INT", None, None)
    assert heartbeat["table_name"] is None
    reasons = [(r["source_line"], r["reason"].split(" (")[0]) for r in rejects]
    assert reasons == [(8, "not a DTS Avro Record"), (9, "no value_b64 field"), (10, "not a valid JSON object")]
    assert decoded.counts == {"read": 10, "decoded": 7, "rejected": 3, "filtered": 0, "events": 7}


def test_container_files_and_corrupt_ones(decode, extract, tmp_path):
    _, records = extract

    def plain(images):  # fastavro's container writer takes enum members as plain strings
        return [v[1] if isinstance(v, tuple) and v[0].endswith("EmptyObject") else v for v in images or []] or images

    with open(tmp_path / "part-0.avro", "wb") as fh:
        rows = [
            dict(r, beforeImages=plain(r["beforeImages"]), afterImages=plain(r["afterImages"])) for r in records[:3]
        ]
        fastavro.writer(fh, container_schema(), rows)
    (tmp_path / "part-1.avro").write_bytes(b"Obj\x01 truncated")
    events, rejects, decoded = decode("dts-avro", tmp_path)
    assert [(e["source_file"].rsplit("/", 1)[-1], e["source_line"], e["op"]) for e in events] == [
        ("part-0.avro", 1, "INSERT"), ("part-0.avro", 2, "UPDATE"), ("part-0.avro", 3, "DELETE")
    ]  # fmt: skip
    assert events[0]["after"] == CANONICAL_ROW
    assert [(r["source_line"], r["raw_encoding"], r["reason"].split(":")[0]) for r in rejects] == [
        (1, "base64", "corrupt Avro container after 0 records")
    ]
    assert decoded.counts == {"read": 4, "decoded": 3, "rejected": 1, "filtered": 0, "events": 3}
