"""AWS DMS JSON (`aws-dms-json`): Paimon's files decode to the table rows its tests assert; round trips.

Paimon: `kafka/aws-dms/table/...` and `KafkaSyncTableActionITCase` as `KafkaAWSDMSSyncTableActionITCase`
runs it: `runSingleTableSchemaEvolution` (data-1..3; data-3 has an update whose before image is in
`BI_` columns), `testTableFiledValNull` (data-4), `testComputedColumn`. Paimon's `DMSRecordParser`
splits an update into -U (the data with the `BI_` values over it) and +I (the data without them): our
UPDATE has the same before and after images.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from tests.conftest import CARRIED_EVERYWHERE, bag, parse, resource
from tests.formats.changelog import PEER, changelog, decoded_files, table_rows
from tests.formats.test_maxwell import (
    FLINK_MAXWELL_EXPECTED,
    PAIMON_COMPUTED,
    PAIMON_SCHEMA_EVOLUTION,
    PAIMON_VALUE_NULL,
)

FORMAT = "aws-dms-json"
PAIMON = PEER / "paimon" / "kafka" / "aws-dms" / "table"
# the expected rows of KafkaSyncTableActionITCase are the same for every format it runs (see test_maxwell)
SCHEMA_EVOLUTION, VALUE_NULL, COMPUTED = PAIMON_SCHEMA_EVOLUTION, PAIMON_VALUE_NULL, PAIMON_COMPUTED


def decode_paimon(decode, *names: str, **options) -> list[dict]:
    return decoded_files(decode, FORMAT, *(PAIMON / n for n in names), **options)


def test_paimon_schema_evolution(decode):
    names = [f"schemaevolution/aws-dms-data-{n}.txt" for n in (1, 2, 3)]
    for n, expected in enumerate(SCHEMA_EVOLUTION, 1):
        assert table_rows(decode_paimon(decode, *names[:n]), "id") == expected
    update = decode_paimon(decode, names[2])[2]
    # data-3's update: the `BI_` columns are the before image; the after image has none of them
    assert (update["op"], update["before"]["address"], update["after"]["address"]) == ("UPDATE", "Shanghai", "Beijing")
    assert not any(c.startswith("BI_") for c in (*update["before"], *update["after"]))
    columns = ("id", "name", "description", "weight", "address")
    assert changelog([update], columns) == [
        "-U(105,hammer,14oz carpenter's hammer,0.875,Shanghai)",
        "+U(105,hammer,14oz carpenter's hammer,0.875,Beijing)",
    ]


def test_paimon_null_value_and_computed_column(decode):
    assert table_rows(decode_paimon(decode, "schemaevolution/aws-dms-data-4.txt"), "id", "null") == VALUE_NULL
    assert table_rows(decode_paimon(decode, "computedcolumn/aws-dms-data-1.txt"), "_id") == COMPUTED


def test_paimon_envelope(decode):
    first = decode_paimon(decode, "schemaevolution/aws-dms-data-1.txt")[0]
    assert (first["op"], first["raw_op"], first["db"], first["table_name"]) == ("INSERT", "insert", "test", "product")
    assert (first["event_time"], first["event_time_unit"]) == (dt.datetime(2024, 10, 27, 12, 39, 3, 210671), "us")
    assert (first["tx_id"], first["pk_columns"], first["column_types"]["weight"]) == ("670014899490", None, "UNKNOWN")
    assert first["meta"]["partition-key-type"] == "schema-table" and first["after"]["weight"] == "3.14"


def test_seed_values_and_ops(decode):
    events, rejects, _ = decode(FORMAT, resource(FORMAT, "seed.jsonl"))
    assert rejects == []
    load, insert, update, delete = events
    assert [(e["op"], e["raw_op"]) for e in events] == [
        ("INSERT", "load"), ("INSERT", "insert"), ("UPDATE", "update"), ("DELETE", "delete"),
    ]  # fmt: skip
    assert insert["after"] == {"id": "10223372036854775806", "amount": "0.10", "note": "first order", "paid": None}
    # pk-only-style before image: three BI_ columns over the data; `note` comes from the data
    assert update["before"] == insert["after"]
    assert update["after"] == {"id": "10223372036854775806", "amount": "12.50", "note": "first order", "paid": "1"}
    assert (delete["before"], delete["after"]) == (update["after"], None)
    assert insert["meta"]["commit-timestamp"] == "2023-11-14T22:13:20.000000Z"
    # with transaction details, the commit time is the event time and DMS's own timestamp the sync time
    assert (insert["event_time"], insert["sync_time"]) == (
        dt.datetime(2023, 11, 14, 22, 13, 20), dt.datetime(2023, 11, 14, 22, 13, 20, 415382),
    )  # fmt: skip
    assert (update["event_time"], update["sync_time"]) == (dt.datetime(2023, 11, 14, 22, 13, 25, 700112), None)
    assert load["tx_id"] is None and insert["tx_id"] == "8589934592"


@pytest.mark.parametrize(
    "path",
    [resource(FORMAT, "seed.jsonl"), PAIMON / "schemaevolution/aws-dms-data-3.txt"],
    ids=["seed", "paimon"],
)
def test_same_format_round_trip_is_exact(roundtrip, path):
    events, again, counts = roundtrip(FORMAT, path, FORMAT)
    assert counts["skipped"] == 0 and counts["written"] == len(events) == len(again) > 0
    assert bag(again) == bag(events)


def test_emitted_json_is_the_message(decode):
    path = PAIMON / "schemaevolution/aws-dms-data-3.txt"
    events, _, _ = decode(FORMAT, path)
    messages = [get_codec(FORMAT).encode(e, {})[0] for e in events]
    assert [parse(m) for m in messages] == [parse(line) for line in path.read_text().splitlines()[-4:]]
    # the same field order as DMS
    assert messages[2].startswith('{"data":{"id":105,') and '"metadata":{"timestamp":' in messages[2]


def test_flink_maxwell_file_through_dms_gives_flinks_changelog(roundtrip):
    events, again, counts = roundtrip("maxwell-json", PEER / "flink-latest/maxwell-data.txt", FORMAT)
    assert counts["skipped"] == 0
    assert changelog(again) == FLINK_MAXWELL_EXPECTED
    assert bag(again, CARRIED_EVERYWHERE) == bag(events, CARRIED_EVERYWHERE)
    assert {e["event_time"] for e in again} == {e["event_time"] for e in events}


def test_before_image_field_and_prefix_options(decode, tmp_path):
    meta = '"metadata":{"timestamp":"2024-01-02 03:04:05.000001","record-type":"data","operation":"update",'
    meta += '"schema-name":"s","table-name":"t"}'
    lines = [
        '{"data":{"id":1,"v":"b","BI_v":"a"},"before-image":{"id":1,"v":"a0"},' + meta + "}",
        '{"data":{"id":2,"BI_code":"x"},' + meta + "}",
    ]
    path = tmp_path / "dms.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events, rejects, _ = decode(FORMAT, path, timezone="+01:00")
    assert rejects == []
    first, second = events
    # the before-image field wins over the BI_ columns; the zone-less timestamp is read in +01:00
    assert (first["before"], first["after"]) == ({"id": "1", "v": "a0"}, {"id": "1", "v": "b"})
    assert first["event_time"] == dt.datetime(2024, 1, 2, 2, 4, 5, 1)
    assert (second["before"], second["after"]) == ({"id": "2", "code": "x"}, {"id": "2"})
    # without a prefix, a column named BI_code is a column like any other
    events, _, _ = decode(FORMAT, path, before_prefix="", before_image="")
    assert (events[1]["before"], events[1]["after"]) == (None, {"id": "2", "BI_code": "x"})
    assert json.loads(events[0]["meta"]["cdc.extra"]) == {"before-image": {"id": 1, "v": "a0"}}
    # a before image that came in its own field goes back there
    again = parse(get_codec(FORMAT).encode(first, {"before_prefix": "BI_", "before_image": "before-image"})[0])
    assert (again["data"], again["before-image"]) == ({"id": "1", "v": "b"}, {"id": "1", "v": "a0"})


def test_control_records_are_other_events_kept_whole(decode, tmp_path):
    line = (
        '{"data":{"table-def":{"columns":{"id":{"type":"INT32"}}}},"metadata":{"timestamp":"2024-01-02T03:04:05Z",'
        '"record-type":"control","operation":"create-table","partition-key-type":"task-id","schema-name":"s",'
        '"table-name":"t"}}'
    )
    path = tmp_path / "control.jsonl"
    path.write_text(line + "\n")
    (event,), rejects, _ = decode(FORMAT, path)
    assert (event["op"], event["raw_op"], event["before"], event["after"]) == ("OTHER", "create-table", None, None)
    assert event["meta"]["control-data"] == '{"table-def":{"columns":{"id":{"type":"INT32"}}}}'
    assert parse(get_codec(FORMAT).encode(event, {"before_prefix": "BI_"})[0]) == parse(line)
    with pytest.raises(Unsupported, match="aws dms has no OTHER"):
        get_codec(FORMAT).encode({**event, "source_format": "oms-canal"}, {})


def _event(**fields) -> dict:
    event = {
        "source_format": "oms-canal", "op": "INSERT", "raw_op": "INSERT", "db": "shop", "db_schema": None,
        "table_name": "orders", "event_time": dt.datetime(2024, 1, 2, 3, 4, 5, 600000, tzinfo=dt.UTC),
        "event_time_unit": "ms", "sync_time": None, "tx_id": "77", "seq": None, "position": None,
        "pk_columns": ["id"], "before": None, "after": {"id": "1", "v": "0.10"}, "column_types": None,
        "source_types": None, "ddl": None, "meta": {"cdc.json_numbers": '["id","v"]'},
    }  # fmt: skip
    return event | fields


def test_cross_format_envelope():
    update = _event(op="UPDATE", before={"id": "1", "v": "0.05"})
    assert get_codec(FORMAT).encode(update, {"before_prefix": "BI_"})[0] == (
        '{"data":{"id":1,"v":0.10,"BI_id":1,"BI_v":0.05},"metadata":{"timestamp":"2024-01-02T03:04:05.600000Z",'
        '"record-type":"data","operation":"update","partition-key-type":"schema-table","schema-name":"shop",'
        '"table-name":"orders","transaction-id":77}}'
    )
    load = parse(get_codec(FORMAT).encode(_event(raw_op="INIT"), {"before_prefix": "BI_"})[0])
    assert load["metadata"]["operation"] == "load"


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"op": "UPSERT"}, "aws dms has no UPSERT"),
        ({"op": "DDL", "ddl": "ALTER TABLE t ADD c INT"}, "aws dms has no DDL"),
        ({"op": "TRUNCATE"}, "aws dms has no TRUNCATE"),
        ({"op": "HEARTBEAT"}, "aws dms has no HEARTBEAT"),
        ({"op": "TX_BEGIN"}, "aws dms has no TX_BEGIN"),
        ({"table_name": None}, "row change without a table name"),
        ({"op": "UPDATE", "before": {"BI_x": "1"}}, "before-image prefix 'BI_'"),
        ({"op": "UPDATE", "before": {}}, "empty before image"),
    ],
)
def test_what_dms_cannot_carry(fields, reason):
    with pytest.raises(Unsupported, match=reason):
        get_codec(FORMAT).encode_event(_event(**fields), {"before_prefix": "BI_"})


def test_rejects(decode, tmp_path):
    meta = '"timestamp":"2024-10-27T12:39:03.210671Z","schema-name":"s","table-name":"t"'
    lines = [
        '{"data":{"id":1}}',
        '{"data":{"id":1},"metadata":{' + meta + ',"record-type":"data","operation":"merge"}}',
        '{"data":{"id":1},"metadata":{' + meta + ',"record-type":"data"}}',
        '{"data":{"id":1},"metadata":{' + meta + ',"record-type":"ddl","operation":"insert"}}',
        '{"metadata":{' + meta + ',"record-type":"data","operation":"delete"}}',
        '{"data":{"id":1},"metadata":"insert"}',
    ]
    path = tmp_path / "dms.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events, rejects, _ = decode(FORMAT, path)
    assert events == []
    assert {r["source_line"]: r["reason"] for r in rejects} == {
        1: "missing metadata",
        2: "unknown operation 'merge'",
        3: "missing operation",
        4: "unknown record-type 'ddl'",
        5: "aws dms delete record without `data`",
        6: "not a valid JSON object",
    }
