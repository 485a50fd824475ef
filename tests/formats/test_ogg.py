"""Oracle GoldenGate JSON (`ogg-json`): the peers' files decode to the changelog their tests assert.

Flink: `ogg-data.txt` and `OggJsonSerDeSchemaTest` (testSerializationAndDeserialization: the expected
changelog; testDeserializationWithMetadata: table, primary keys, `current_ts` and `op_ts` of the first
line). Paimon: `kafka/ogg/table/...` and `KafkaSyncTableActionITCase` as `KafkaOggSyncTableActionITCase`
runs it: `runSingleTableSchemaEvolution`, `testComputedColumn`, `testCDCOperations` (event files).

Flink reads `weight` as a FLOAT: its expected `3.14` is the float32 view of the double text OGG wrote
(`3.140000104904175`), which our canonical value keeps as written; the changelog is compared through
that float32 view, as `test_peer_corpora` does for Debezium.
"""

from __future__ import annotations

import datetime as dt

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from tests.conftest import CARRIED_EVERYWHERE, bag, parse, resource
from tests.formats.changelog import FLINK_PRODUCTS, PEER, changelog, decoded_files, table_rows
from tests.formats.test_peer_corpora import java_float_text

FORMAT = "ogg-json"
FLINK_FILE = PEER / "flink-latest/ogg-data.txt"
PAIMON = PEER / "paimon" / "kafka" / "ogg" / "table"

# OggJsonSerDeSchemaTest.testSerializationDeserialization
FLINK_OGG_EXPECTED = FLINK_PRODUCTS[:20]
# KafkaSyncTableActionITCase.testSchemaEvolutionImpl: the table after data-1, after data-2, after data-3
PAIMON_SCHEMA_EVOLUTION = [
    ["+I[101, scooter, Small 2-wheel scooter, 3.14]", "+I[102, car battery, 12V car battery, 8.1]"],
    [
        "+I[101, scooter, Small 2-wheel scooter, 3.14, NULL]",
        "+I[102, car battery, 12V car battery, 8.1, NULL]",
        "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18]",
        "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24]",
    ],
    [
        "+I[102, car battery, 12V car battery, 8.1, NULL, NULL]",
        "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8, 18, NULL]",
        "+I[104, hammer, 12oz carpenter's hammer, 0.75, 24, NULL]",
        "+I[105, hammer, 14oz carpenter's hammer, 0.875, NULL, Beijing]",
        "+I[107, rocks, box of assorted rocks, 5.3, NULL, NULL]",
    ],
]
# KafkaSyncTableActionITCase.testCDCOperations: after event-insert, event-update, event-delete
PAIMON_CDC_OPERATIONS = [
    [
        "+I[101, scooter, Small 2-wheel scooter, 3.14]",
        "+I[102, car battery, 12V car battery, 8.1]",
        "+I[103, scooter, Big 2-wheel scooter , 5.1]",
    ],
    [
        "+I[101, scooter, Small 2-wheel scooter, 3.14]",
        "+I[102, car battery, 12V car battery, 8.1]",
        "+I[103, scooter, Big 2-wheel scooter , 8.1]",
    ],
    ["+I[101, scooter, Small 2-wheel scooter, 3.14]", "+I[102, car battery, 12V car battery, 8.1]"],
]
# testComputedColumn expects +I[101, 2023-03-23, 2023]; the last value is Paimon's computed `_year`
PAIMON_COMPUTED = ["+I[101, 2023-03-23]"]


def flink_float(column: str, value: str) -> str:
    return java_float_text(value) if column == "weight" else value


def epoch_ms(value: dt.datetime) -> int:
    return (value - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)


def test_flink_changelog(decode):
    events, rejects, _ = decode(FORMAT, FLINK_FILE)
    assert rejects == [] and len(events) == 16
    assert changelog(events, show=flink_float) == FLINK_OGG_EXPECTED
    assert {(e["db"], e["table_name"]) for e in events} == {("OGG", "TBL_TEST")}
    # the digits OGG wrote are kept; Flink's FLOAT is a view of them
    assert events[0]["after"]["weight"] == "3.140000104904175" and events[5]["after"]["weight"] == "1"
    # line 12 also carries a Debezium-like `source` object: kept whole, not read
    assert '"source":{"version":"1.1.1.Final"' in events[11]["meta"]["cdc.extra"]


def test_flink_metadata_of_the_first_line(decode):
    # testDeserializationWithMetadata asserts table OGG.TBL_TEST, primary keys [id], current_ts
    # 1589377175766 and op_ts 1589384406000. The stored copy of Flink's file has neither `current_ts`
    # nor `primary_keys` in its first line (it spells the key field `priamry_keys`, which is kept, not
    # read); Paimon's copy of the same first message has both, and is checked for the two times.
    first = decode(FORMAT, FLINK_FILE)[0][0]
    assert (first["db"], first["table_name"], first["pk_columns"]) == ("OGG", "TBL_TEST", None)
    assert '"priamry_keys":["id"]' in first["meta"]["cdc.extra"]
    assert (epoch_ms(first["event_time"]), first["event_time_unit"], first["sync_time"]) == (1589384406000, "us", None)
    assert first["position"] == "00000000000000000000143"
    paimon = decode_paimon(decode, "schemaevolution/ogg-data-1.txt")[0]
    assert (paimon["db"], paimon["table_name"], paimon["pk_columns"]) == ("OGG", "TBL_TEST", ["id"])
    assert (epoch_ms(paimon["sync_time"]), epoch_ms(paimon["event_time"])) == (1589377175766, 1589384406000)


def decode_paimon(decode, *names: str, **options) -> list[dict]:
    return decoded_files(decode, FORMAT, *(PAIMON / n for n in names), **options)


def test_paimon_schema_evolution(decode):
    names = [f"schemaevolution/ogg-data-{n}.txt" for n in (1, 2, 3)]
    for n, expected in enumerate(PAIMON_SCHEMA_EVOLUTION, 1):
        assert table_rows(decode_paimon(decode, *names[:n]), "id") == expected


def test_paimon_cdc_operations_and_computed_column(decode):
    names = [f"event/event-{kind}.txt" for kind in ("insert", "update", "delete")]
    for n, expected in enumerate(PAIMON_CDC_OPERATIONS, 1):
        assert table_rows(decode_paimon(decode, *names[:n]), "id") == expected
    assert table_rows(decode_paimon(decode, "computedcolumn/ogg-data-1.txt"), "_id") == PAIMON_COMPUTED


def test_seed_values_ops_and_times(decode):
    events, rejects, _ = decode(FORMAT, resource(FORMAT, "seed.jsonl"))
    assert rejects == []
    insert, update, update_after_only, delete, truncate = events
    assert [e["op"] for e in events] == ["INSERT", "UPDATE", "UPDATE", "DELETE", "TRUNCATE"]
    assert insert["after"] == {"ID": "10223372036854775806", "AMOUNT": "0.10", "NOTE": "first order", "PAID": None}
    assert (update["before"], update["after"]["AMOUNT"]) == (insert["after"], "12.50")
    assert (update_after_only["before"], update_after_only["after"]) == (
        None,
        {"ID": "10223372036854775806", "NOTE": "updated without a before image"},
    )
    assert (delete["after"], truncate["before"], truncate["after"]) == (None, None, None)
    assert (update["event_time"], update["event_time_unit"]) == (dt.datetime(2023, 11, 14, 22, 13, 25, 123456), "us")
    assert update["sync_time"] == dt.datetime(2023, 11, 14, 22, 13, 26, 2000)
    assert (insert["pk_columns"], insert["position"]) == (["ID"], "00000000000000001234")
    assert insert["meta"]["cdc.extra"] == '{"tokens":{"csn":"2511417"}}'


def test_timezone_option_reads_and_writes_wall_clock_text(decode):
    path = resource(FORMAT, "seed.jsonl")
    events, _, _ = decode(FORMAT, path, timezone="Asia/Shanghai")
    assert events[1]["event_time"] == dt.datetime(2023, 11, 14, 14, 13, 25, 123456)  # 22:13 in UTC+8
    assert events[1]["sync_time"] == dt.datetime(2023, 11, 14, 14, 13, 26, 2000)
    # from another format, the instants go out as wall-clock text in the option's zone
    other = {**events[1], "source_format": "oms-canal", "event_time": events[1]["event_time"].replace(tzinfo=dt.UTC)}
    other["sync_time"] = other["sync_time"].replace(tzinfo=dt.UTC)
    message = parse(get_codec(FORMAT).encode(other, {"timezone": "+08:00"})[0])
    assert (message["op_ts"], message["current_ts"]) == ("2023-11-14 22:13:25.123456", "2023-11-14T22:13:26.002000")
    utc = parse(get_codec(FORMAT).encode(other, {"timezone": "UTC"})[0])
    assert utc["op_ts"] == "2023-11-14 14:13:25.123456"


@pytest.mark.parametrize(
    ("path", "options"),
    [
        (resource(FORMAT, "seed.jsonl"), {}),
        (resource(FORMAT, "seed.jsonl"), {"timezone": "America/New_York"}),
        (FLINK_FILE, {}),
        (PAIMON / "schemaevolution/ogg-data-3.txt", {}),
    ],
    ids=["seed", "seed-new-york", "flink", "paimon"],
)
def test_same_format_round_trip_is_exact(roundtrip, path, options):
    events, again, counts = roundtrip(FORMAT, path, FORMAT, source_options=options, decode_options=options, **options)
    assert counts["skipped"] == 0 and counts["written"] == len(events) == len(again) > 0
    assert bag(again) == bag(events)


def _without_nulls(message: dict) -> dict:
    return {k: v for k, v in message.items() if v is not None}


@pytest.mark.parametrize("path", [resource(FORMAT, "seed.jsonl"), FLINK_FILE])
def test_emitted_json_is_the_message(decode, path):
    # OGG writes `before`/`after` as null where an op has none (Flink's serializer does too); the
    # messages are the same once those nulls are left out
    events, _, _ = decode(FORMAT, path)
    messages = [parse(get_codec(FORMAT).encode(e, {})[0]) for e in events]
    lines = [parse(line) for line in path.read_text().splitlines()]
    assert [_without_nulls(m) for m in messages] == [_without_nulls(m) for m in lines]


def test_maxwell_file_through_ogg_gives_flinks_changelog(roundtrip):
    events, again, counts = roundtrip("maxwell-json", PEER / "flink-latest/maxwell-data.txt", FORMAT)
    assert counts["skipped"] == 0
    assert bag(again, CARRIED_EVERYWHERE) == bag(events, CARRIED_EVERYWHERE)
    # Maxwell's `old` holds the changed columns; OGG carries the whole before image it implies
    assert [e["before"] for e in again] == [e["before"] for e in events]
    assert {parse_table(e) for e in again} == {("test", "product")}


def parse_table(event: dict) -> tuple:
    return event["db"], event["table_name"]


def _event(**fields) -> dict:
    event = {
        "source_format": "oms-canal", "op": "INSERT", "raw_op": "INSERT", "db": "shop", "db_schema": None,
        "table_name": "orders", "event_time": dt.datetime(2024, 1, 2, 3, 4, 5, 600000, tzinfo=dt.UTC),
        "event_time_unit": "ms", "sync_time": None, "tx_id": None, "seq": None, "position": "p:1",
        "pk_columns": ["id"], "before": None, "after": {"id": "1", "v": "0.10"}, "column_types": None,
        "source_types": None, "ddl": None, "meta": {"cdc.json_numbers": '["id","v"]'},
    }  # fmt: skip
    return event | fields


def test_cross_format_envelope():
    message = get_codec(FORMAT).encode(_event(), {})[0]
    assert message == (
        '{"table":"shop.orders","op_type":"I","op_ts":"2024-01-02 03:04:05.600000","pos":"p:1",'
        '"primary_keys":["id"],"before":null,"after":{"id":1,"v":0.10}}'
    )
    truncate = parse(get_codec(FORMAT).encode(_event(op="TRUNCATE", after=None, pk_columns=None), {})[0])
    assert truncate == {"table": "shop.orders", "op_type": "T", "op_ts": "2024-01-02 03:04:05.600000", "pos": "p:1"}


@pytest.mark.parametrize("target", [FORMAT, "aws-dms-json"])
def test_a_year_before_1000_is_written_with_four_digits_and_read_back(target):
    """`%Y` writes year 999 as `999`, a text neither decoder reads: the year is padded as ISO 8601 writes it."""
    moment = dt.datetime(999, 1, 2, 3, 4, 5, 600000, tzinfo=dt.UTC)
    codec = get_codec(target)
    message = codec.encode(_event(event_time=moment), {})[0]
    assert "0999-01-02" in message
    (event,) = codec.decode(message.encode(), {})
    assert event["event_time"] == (moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"op": "UPSERT"}, "ogg has no UPSERT"),
        ({"op": "DDL", "ddl": "ALTER TABLE t ADD c INT"}, "ogg has no DDL"),
        ({"op": "HEARTBEAT"}, "ogg has no HEARTBEAT"),
        ({"op": "TX_END"}, "ogg has no TX_END"),
        ({"table_name": None}, "INSERT without a table name"),
        ({"op": "TRUNCATE", "table_name": None}, "TRUNCATE without a table name"),
    ],
)
def test_what_ogg_cannot_carry(fields, reason):
    with pytest.raises(Unsupported, match=reason):
        get_codec(FORMAT).encode_event(_event(**fields), {})


def test_rejects(decode, tmp_path):
    lines = [
        '{"table":"S.T","op_type":"X","op_ts":"2020-05-13 15:40:06.000000","after":{"id":1}}',
        '{"table":"S.T","op_ts":"2020-05-13 15:40:06.000000","after":{"id":1}}',
        '{"table":"S.T","op_type":"I","op_ts":"2020-05-13 15:40:06.000000","after":"id=1"}',
        '{"table":"S.T","op_type":"D","op_ts":"2020-05-13 15:40:06.000000","after":{"id":1}}',
        '{"table":"S.T","op_type":"I","op_ts":"yesterday","after":{"id":1}}',
        '{"table":"S.T","op_type":"I","op_ts":"2020-05-13 15:40:06","current_ts":"now","after":{"id":1}}',
    ]
    path = tmp_path / "ogg.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events, rejects, _ = decode(FORMAT, path)
    assert events == []
    assert {r["source_line"]: r["reason"] for r in rejects} == {
        1: "unknown op_type 'X'",
        2: "missing op_type",
        3: "not a valid JSON object",
        4: "DELETE without a before image",
        5: "event time is neither an epoch number nor a date-time",
        6: "sync time is neither an epoch number nor a date-time",
    }
