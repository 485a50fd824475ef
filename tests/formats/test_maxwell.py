"""Maxwell JSON (`maxwell-json`): the peers' files decode to the changelog their tests assert; round trips.

Flink: `maxwell-data.txt` and `MaxwellJsonSerDerTest` (testSerializationDeserialization: the expected
changelog; testDeserializationWithMetadata: database, table, primary-key-columns, ingestion-timestamp
of the first line). `flink/` is the older copy of the file (no `primary_key_columns`), `flink-latest/`
the newer. Paimon: `kafka/maxwell/table/...` and `KafkaSyncTableActionITCase` (run by
`KafkaMaxwellSyncTableActionITCase`): the table rows after each file of `runSingleTableSchemaEvolution`,
`testTableFiledValNull` and `testComputedColumn`.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from tests.conftest import CARRIED_EVERYWHERE, bag, parse, resource
from tests.formats.changelog import FLINK_PRODUCTS, PEER, changelog, decoded_files, table_rows
from tests.formats.test_peer_corpora import FLINK_CANAL_EXPECTED

FORMAT = "maxwell-json"
FLINK_FILES = ("flink/maxwell-data.txt", "flink-latest/maxwell-data.txt")
PAIMON = PEER / "paimon" / "kafka" / "maxwell" / "table"

# MaxwellJsonSerDerTest.testSerializationDeserialization
FLINK_MAXWELL_EXPECTED = FLINK_PRODUCTS
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
# KafkaSyncTableActionITCase.testTableFiledValNull (data-4; Paimon prints this null in lower case)
PAIMON_VALUE_NULL = [
    "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, null]",
    "+I[104, hammer, 12oz carpenter's hammer, 0.75]",
]
# KafkaSyncTableActionITCase.testComputedColumn expects +I[101, 2023-03-23, 2023]: the last value is the
# computed column `_year=year(_date)`, Paimon's own work; the message carries the first two
PAIMON_COMPUTED = ["+I[101, 2023-03-23]"]


def decoded(decode, *paths) -> list[dict]:
    return decoded_files(decode, FORMAT, *paths)


@pytest.mark.parametrize("name", FLINK_FILES)
def test_flink_changelog(decode, name):
    events, rejects, _ = decode(FORMAT, PEER / name)
    assert rejects == [] and len(events) == 20
    assert changelog(events) == FLINK_MAXWELL_EXPECTED
    assert {(e["db"], e["table_name"], e["event_time_unit"]) for e in events} == {("test", "product", "s")}
    assert {tuple(e["pk_columns"] or ()) for e in events} == ({("id",)} if "latest" in name else {()})
    # `old` names the changed columns; the rest of the before image is `data`
    (update_110,) = [e for e in events if e["op"] == "UPDATE" and e["after"]["id"] == "110"]
    assert json.loads(update_110["meta"]["cdc.changed_columns"]) == ["description", "weight"]
    assert {e["column_types"]["weight"] for e in events} == {"UNKNOWN"}  # Maxwell writes no types


def test_flink_metadata_of_the_first_line(decode):
    # testDeserializationWithMetadata: database, table, primary-key-columns, ingestion-timestamp (ms)
    first = decode(FORMAT, PEER / "flink-latest/maxwell-data.txt")[0][0]
    assert (first["db"], first["table_name"], first["pk_columns"]) == ("test", "product", ["id"])
    assert first["event_time"] == dt.datetime(2020, 8, 6, 3, 34, 43)  # 1596684883000 ms
    assert (first["tx_id"], first["meta"]["xid"], first["meta"]["xoffset"]) == ("7125", "7125", "0")
    last = decode(FORMAT, PEER / "flink-latest/maxwell-data.txt")[0][-1]
    assert last["meta"]["commit"] == "true" and "xoffset" not in last["meta"]


def test_paimon_schema_evolution(decode):
    files = [PAIMON / "schemaevolution" / f"maxwell-data-{n}.txt" for n in (1, 2, 3)]
    for n, expected in enumerate(PAIMON_SCHEMA_EVOLUTION, 1):
        assert table_rows(decoded(decode, *files[:n]), "id") == expected
    events = decoded(decode, *files)
    assert [e["op"] for e in events] == ["INSERT"] * 4 + ["INSERT", "DELETE", "UPDATE", "INSERT"]


def test_paimon_null_value_and_computed_column(decode):
    assert table_rows(decoded(decode, PAIMON / "schemaevolution" / "maxwell-data-4.txt"), "id", "null") == (
        PAIMON_VALUE_NULL
    )
    assert table_rows(decoded(decode, PAIMON / "computedcolumn" / "maxwell-data-1.txt"), "_id") == PAIMON_COMPUTED


def test_seed_values_stay_exact(decode):
    events, rejects, _ = decode(FORMAT, resource(FORMAT, "seed.jsonl"))
    assert rejects == []
    insert, update, delete, ddl, bootstrap = events
    assert [e["op"] for e in events] == ["INSERT", "UPDATE", "DELETE", "DDL", "INSERT"]
    # numbers keep their digits: 0.10 is not 0.1, a 20-digit id is not a long
    assert insert["after"] == {
        "id": "10223372036854775806", "amount": "0.10", "note": "first order", "paid": None,
        "created": "2023-11-14 22:13:20",
    }  # fmt: skip
    assert update["before"] == insert["after"] and update["after"]["amount"] == "12.50"
    assert json.loads(update["meta"]["cdc.changed_columns"]) == ["amount", "paid"]
    assert (delete["before"], delete["after"]) == (update["after"], None)
    assert (update["tx_id"], update["position"], update["meta"]["commit"]) == ("8250", "mysql-bin.000003:1342", "true")
    assert (ddl["raw_op"], ddl["ddl"]) == ("table-alter", "ALTER TABLE orders ADD COLUMN note varchar(64)")
    assert set(json.loads(ddl["meta"]["cdc.extra"])) == {"old", "def"}  # the table definitions, kept whole
    assert (bootstrap["raw_op"], bootstrap["after"]["amount"]) == ("bootstrap-insert", "3.00")
    assert insert["event_time"] == dt.datetime(2023, 11, 14, 22, 13, 20)


@pytest.mark.parametrize(
    "path",
    [resource(FORMAT, "seed.jsonl"), *(PEER / n for n in FLINK_FILES), PAIMON / "schemaevolution/maxwell-data-3.txt"],
    ids=lambda p: p.parent.name + "/" + p.name,
)
def test_same_format_round_trip_is_exact(roundtrip, path):
    events, again, counts = roundtrip(FORMAT, path, FORMAT)
    assert counts["skipped"] == 0 and counts["written"] == len(events) == len(again) > 0
    assert bag(again) == bag(events)


@pytest.mark.parametrize("path", [resource(FORMAT, "seed.jsonl"), PEER / "flink-latest/maxwell-data.txt"])
def test_emitted_json_is_the_message(decode, path):
    events, _, _ = decode(FORMAT, path)
    messages = [get_codec(FORMAT).encode(e, {})[0] for e in events]
    assert [parse(m) for m in messages] == [parse(line) for line in path.read_text().splitlines()]
    if path.name == "seed.jsonl":
        assert '"amount":0.10' in messages[0] and '"id":10223372036854775806' in messages[0]


def test_flink_canal_file_through_maxwell_gives_flinks_changelog(roundtrip):
    # a cross-format trip: Flink's canal file -> maxwell-json -> the changelog Flink's canal test expects
    events, again, counts = roundtrip("oms-canal", PEER / "flink/canal-data.txt", FORMAT)
    assert counts["skipped"] == 0
    assert changelog(again) == FLINK_CANAL_EXPECTED
    assert bag(again, CARRIED_EVERYWHERE) == bag(events, CARRIED_EVERYWHERE)
    assert {e["raw_op"] for e in again if e["op"] == "DDL"} == {"table-alter"}


def _event(**fields) -> dict:
    event = {
        "source_format": "oms-canal", "op": "INSERT", "raw_op": "INSERT", "db": "shop", "db_schema": None,
        "table_name": "orders", "event_time": dt.datetime(2024, 1, 2, 3, 4, 5, 600000, tzinfo=dt.UTC),
        "event_time_unit": "ms", "sync_time": None, "tx_id": "g:42", "seq": None, "position": None,
        "pk_columns": ["id"], "before": None, "after": {"id": "1", "v": "0.10"}, "column_types": None,
        "source_types": None, "ddl": None, "meta": {"cdc.json_numbers": '["id","v"]'},
    }  # fmt: skip
    return event | fields


def test_cross_format_envelope():
    before, after = {"id": "1", "v": "0.10", "w": "same"}, {"id": "1", "v": "0.20", "w": "same"}
    message = get_codec(FORMAT).encode(_event(op="UPDATE", raw_op="UPDATE", before=before, after=after), {})[0]
    assert message == (
        '{"database":"shop","table":"orders","type":"update","ts":1704164645,"xid":"g:42",'
        '"data":{"id":1,"v":0.20,"w":"same"},"old":{"v":0.10},"primary_key_columns":["id"]}'
    )
    ddl = parse(get_codec(FORMAT).encode(_event(op="DDL", ddl="CREATE DATABASE x", table_name=None), {})[0])
    assert (ddl["type"], ddl["sql"], "table" in ddl) == ("database-alter", "CREATE DATABASE x", False)
    full_load = parse(get_codec(FORMAT).encode(_event(raw_op="INIT"), {})[0])
    assert full_load["type"] == "bootstrap-insert"


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"op": "UPSERT"}, "maxwell has no UPSERT"),
        ({"op": "HEARTBEAT"}, "maxwell has no HEARTBEAT"),
        ({"op": "TRUNCATE"}, "maxwell has no TRUNCATE"),
        ({"op": "TX_BEGIN"}, "maxwell has no TX_BEGIN"),
        ({"op": "OTHER"}, "maxwell has no OTHER"),
        ({"op": "UPDATE", "before": None}, "UPDATE without a before image"),
        ({"table_name": None}, "row change without a table name"),
    ],
)
def test_what_maxwell_cannot_carry(fields, reason):
    with pytest.raises(Unsupported, match=reason):
        get_codec(FORMAT).encode_event(_event(**fields), {})


def test_bootstrap_markers_and_rejects(decode, tmp_path):
    lines = [
        '{"database":"shop","table":"t","type":"bootstrap-start","ts":1450557744,"data":{}}',
        '{"database":"shop","table":"t","type":"bootstrap-complete","ts":1450557744,"data":{}}',
        '{"database":"shop","table":"t","type":"insert","ts":1450557744}',
        '{"database":"shop","table":"t","type":"upsert","ts":1450557744,"data":{"id":1}}',
        '{"database":"shop","table":"t","type":"update","ts":1450557744,"data":[1]}',
        '{"database":"shop","table":"t","type":"delete","ts":"soon","data":{"id":1}}',
    ]
    path = tmp_path / "maxwell.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events, rejects, _ = decode(FORMAT, path)
    assert [(e["op"], e["raw_op"], e["before"], e["after"], e["meta"]["cdc.extra"]) for e in events] == [
        ("OTHER", "bootstrap-start", None, None, '{"data":{}}'),
        ("OTHER", "bootstrap-complete", None, None, '{"data":{}}'),
    ]
    assert {r["source_line"]: r["reason"] for r in rejects} == {
        3: "maxwell insert message without `data`",
        4: "unknown type 'upsert'",
        5: "not a valid JSON object",
        6: "event time is neither an epoch number nor a date-time",
    }
    # the markers go out again as they came (a Maxwell event's own type and fields)
    for event, line in zip(events, lines, strict=False):
        assert parse(get_codec(FORMAT).encode(event, {})[0]) == parse(line)
