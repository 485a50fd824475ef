"""DataWorks Kafka JSON (seed 002) and the DataHub BLOB payload (seed 004), plus Paimon's real files."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.conftest import resource

ROW_MAN = {"name": "name11", "job": "job11", "sex": "man", "#alibaba_rds_row_id#": "15"}
ROW_WOMAN = ROW_MAN | {"sex": "woman"}
NO_PK_TYPES = {"name": "STRING", "job": "STRING", "sex": "STRING", "#alibaba_rds_row_id#": "INT"}


@pytest.fixture(scope="module")
def seed_002(decode):
    return decode("dataworks-json", resource("dataworks-json", "seed-002.jsonl"))


@pytest.fixture(scope="module")
def seed_004(decode):
    return decode("dataworks-json", resource("dataworks-json", "seed-004.jsonl"))


def test_seed_002(seed_002):
    events, rejects, decoded = seed_002
    assert rejects == []
    ops = [(e["source_line"], e["op"], e["raw_op"]) for e in events]
    assert ops == [
        (1, "HEARTBEAT", "MHEARTBEAT"),
        (2, "INSERT", "INSERT"),
        (4, "UPDATE", "UPDATE_AFTER"),  # the split pair of lines 3 and 4
        (5, "UPDATE", "UPDATE_AFTER"),  # the merged update
        (6, "DELETE", "DELETE"),
    ]
    heartbeat, insert, split, merged, delete = events
    assert (heartbeat["event_time"], heartbeat["event_time_unit"]) == (dt.datetime(2021, 5, 8, 7, 7, 39), "ms")
    assert (insert["before"], insert["after"]) == (None, ROW_MAN)
    assert (split["before"], split["after"]) == (ROW_MAN, ROW_WOMAN)
    assert split["meta"]["cdc.before_source_line"] == "3" and split["meta"]["cdc.before_raw_op"] == "UPDATE_BEFOR"
    assert (merged["before"], merged["after"]) == (ROW_MAN, ROW_WOMAN)
    assert "cdc.before_source_line" not in merged["meta"]
    assert (delete["before"], delete["after"]) == (ROW_WOMAN, None)
    for e in (insert, split, merged, delete):
        assert (e["db"], e["table_name"], e["pk_columns"]) == ("pkset_test", "pkset_test_no_pk", None)
        assert e["column_types"] == NO_PK_TYPES and e["source_types"]["#alibaba_rds_row_id#"] == "LONG"
        assert e["meta"]["dbType"] == "MySQL" and e["meta"]["version"] == "0.0.1"
    assert split["seq"] == merged["seq"] == "1620457642589000001"
    assert split["sync_time"] == dt.datetime(2021, 5, 8, 7, 14, 37, 779000)
    # six messages read, all decoded: the split pair is two messages in one event
    assert decoded.counts == {"read": 6, "decoded": 6, "rejected": 0, "filtered": 0, "events": 5}


def test_seed_004(seed_004):
    events, rejects, decoded = seed_004
    assert rejects == []
    ops = [(e["source_line"], e["op"], e["raw_op"]) for e in events]
    assert ops == [(1, "INSERT", "INSERT"), (3, "UPDATE", "UPDATE_AFTER"), (4, "DELETE", "DELETE"),
                   (5, "HEARTBEAT", "MHEARTBEAT"), (6, "DDL", "ALTER")]  # fmt: skip
    insert, update, delete, heartbeat, ddl = events
    row = {"id": "1", "name": "joe", "comment": "comment"}
    assert insert["after"] == row and insert["pk_columns"] == ["id", "name"]
    assert (update["before"], update["after"]) == (row, row | {"comment": "com1"})
    assert delete["before"] == row | {"comment": "com1"}
    assert insert["column_types"] == {"id": "INT", "name": "STRING", "comment": "STRING"}
    assert (heartbeat["event_time"], heartbeat["table_name"]) == (dt.datetime(2020, 11, 14, 7, 45, 53, 629000), None)
    assert (ddl["db"], ddl["table_name"], ddl["ddl"]) == (
        "example_db", "example_table_nopk", "alter table example_table_nopk add column holo text",
    )  # fmt: skip
    # the Java-serialized DDLMeta is kept as opaque text, never deserialized
    assert ddl["meta"]["ddlMeta"].startswith("rO0ABXNyACljb20uYWxpYmFiYS5kaS5wbHVnaW4uY2VudGVyLm1ldGEuRERMTWV0YQ")
    assert decoded.counts == {"read": 6, "decoded": 6, "rejected": 0, "filtered": 0, "events": 5}


def _message(op: str, sequence: str | None, before=None, after=None, types=None) -> str:
    types = types or {"id": "LONG", "v": "STRING"}
    payload = {"op": op, "sequenceId": sequence, "timestamp": {"eventTime": 1620458077000}}
    if before is not None:
        payload["before"] = {"dataColumn": before}
    if after is not None:
        payload["after"] = {"dataColumn": after}
    schema = {"dataColumn": [{"name": k, "type": t} for k, t in types.items()], "primaryKey": ["id"],
              "source": {"dbType": "MySQL", "dbName": "d", "tableName": "t"}}  # fmt: skip
    return json.dumps({"schema": schema, "payload": payload, "version": "1.0.0"})


def halves_across_files() -> tuple[list[str], list[str]]:
    """(a.jsonl, b.jsonl): an update whose after half is in a and before half in b, an insert, an orphan."""
    a = [
        _message("UPDATE_AFTER", "7", after={"id": 1, "v": "new"}),
        _message("INSERT", "8", after={"id": 2, "v": "x"}),
        _message("UPDATE_BEFOR", "9", before={"id": 3, "v": "lonely"}),
    ]
    return a, [_message("UPDATE_BEFOR", "7", before={"id": 1, "v": "old"})]


def halves_of_a_reused_key() -> list[str]:
    """Key 5's halves twice (befores first), a lone after half of key 6 between its afters."""
    return [
        _message("UPDATE_BEFOR", "5", before={"id": 1, "v": "a"}),
        _message("UPDATE_BEFOR", "5", before={"id": 1, "v": "b"}),
        _message("UPDATE_AFTER", "5", after={"id": 1, "v": "b"}),
        _message("UPDATE_AFTER", "6", after={"id": 2, "v": "alone"}),
        _message("UPDATE_AFTER", "5", after={"id": 1, "v": "c"}),
    ]


def test_split_halves_pair_wherever_they_sit_and_orphans_are_rejected(decode, tmp_path):
    a, b = halves_across_files()
    (tmp_path / "a.jsonl").write_text("\n".join(a) + "\n")
    (tmp_path / "b.jsonl").write_text("\n".join(b) + "\n")
    events, rejects, decoded = decode("dataworks-json", tmp_path)
    update = next(e for e in events if e["op"] == "UPDATE")
    assert (update["before"], update["after"]) == ({"id": "1", "v": "old"}, {"id": "1", "v": "new"})
    assert update["source_file"].endswith("a.jsonl") and update["meta"]["cdc.before_source_file"].endswith("b.jsonl")
    assert [(r["source_line"], r["reason"]) for r in rejects] == [
        (3, "UPDATE_BEFOR without its matching after half (pair key d\u0001t\u00019)")
    ]
    assert decoded.counts == {"read": 4, "decoded": 3, "rejected": 1, "filtered": 0, "events": 2}


def test_halves_of_a_reused_key_pair_in_input_order(decode, tmp_path):
    """The n-th before half of a key goes with its n-th after half, even when the key comes back."""
    (tmp_path / "a.jsonl").write_text("\n".join(halves_of_a_reused_key()) + "\n")
    events, rejects, decoded = decode("dataworks-json", tmp_path)
    pairs = sorted((e["source_line"], e["meta"].get("cdc.before_source_line"), e["before"], e["after"]) for e in events)
    assert pairs == [
        (3, "1", {"id": "1", "v": "a"}, {"id": "1", "v": "b"}),
        (4, None, None, {"id": "2", "v": "alone"}),
        (5, "2", {"id": "1", "v": "b"}, {"id": "1", "v": "c"}),
    ]
    assert rejects == [] and decoded.counts == {"read": 5, "decoded": 5, "rejected": 0, "filtered": 0, "events": 3}


def test_column_types_to_canonical(decode, tmp_path):
    types = {"id": "LONG", "ok": "BOOLEAN", "price": "DOUBLE", "at": "DATE", "blob": "BYTES", "s": "STRING"}
    after = {"id": 10223372036854775806, "ok": True, "price": 1.10, "at": 1590315269000, "blob": "aGk=", "s": "x"}
    line = _message("INSERT", "1", after=after, types=types).replace('"price": 1.1', '"price": 1.10')
    (tmp_path / "t.jsonl").write_text(line + "\n")
    events, rejects, _ = decode("dataworks-json", tmp_path)
    assert rejects == []
    assert events[0]["after"] == {
        "id": "10223372036854775806", "ok": "true", "price": "1.10", "at": "2020-05-24T10:14:29.000Z",
        "blob": "aGk=", "s": "x",
    }  # fmt: skip
    assert events[0]["column_types"] == {
        "id": "INT", "ok": "BOOLEAN", "price": "DOUBLE", "at": "TIMESTAMP", "blob": "BYTES", "s": "STRING"
    }  # fmt: skip


def test_date_is_millis_at_any_date(decode, tmp_path):
    """DataWorks DATE is epoch millis: 11 digits (1972) and negative (1969) stay millis, not seconds."""
    types = {"id": "LONG", "a": "DATE", "b": "DATE", "c": "DATE", "d": "DATE"}
    after = {"id": 1, "a": 70000000000, "b": -1, "c": "1590315269123.456789012", "d": 0}
    (tmp_path / "t.jsonl").write_text(_message("INSERT", "1", after=after, types=types) + "\n")
    events, rejects, _ = decode("dataworks-json", tmp_path)
    assert rejects == []
    assert events[0]["after"] == {
        "id": "1", "a": "1972-03-21T04:26:40.000Z", "b": "1969-12-31T23:59:59.999Z",
        "c": "2020-05-24T10:14:29.456789012Z", "d": "1970-01-01T00:00:00.000Z",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "op", "before", "after", "event_time"),
    [
        ("event-insert.txt", "INSERT", None, {"id": "2", "val": "1.100000", "name": "a"}, None),
        ("event-delete.txt", "DELETE", {"id": "1", "val": "1.100000", "name": "a"}, None,
         dt.datetime(2024, 11, 15, 9, 14, 45)),
        ("event-update-in-one.txt", "UPDATE", {"id": "2", "val": "1.100000", "name": "a"},
         {"id": "2", "val": "2.200000", "name": "a"}, dt.datetime(2024, 11, 15, 9, 14, 57)),
    ],
)  # fmt: skip
def test_paimon_aliyun_files(decode, name, op, before, after, event_time):
    """Paimon's real DataWorks messages; each line of the licence header before them is a reject."""
    path = resource("peer", "paimon-aliyun", name)
    events, rejects, _ = decode("dataworks-json", path)
    assert len(rejects) == len(path.read_text().splitlines()) - 1
    assert {r["reason"] for r in rejects} == {"not a valid JSON object", "empty line"}
    (event,) = events
    created = {"create_time": "2024-11-15T08:58:34.000Z"}
    assert event["op"] == op and event["event_time"] == event_time
    assert event["before"] == (before and before | created) and event["after"] == (after and after | created)
    assert event["column_types"] == {"id": "INT", "val": "DOUBLE", "name": "STRING", "create_time": "TIMESTAMP"}
    assert (event["db"], event["table_name"], event["pk_columns"]) == ("bigdata_test", "sync_test_table", ["id"])


def test_unknown_stamps_and_unreadable_times(decode, tmp_path):
    """-1 stamps (full load) are no times but stay in meta; a stamp that is no count is a reject."""
    unknown = json.loads(_message("INSERT", "1", after={"id": 1, "v": "x"}))
    unknown["payload"]["timestamp"] = {"eventTime": -1, "systemTime": "-1", "checkpointTime": -1}
    bad_sync = json.loads(_message("INSERT", "2", after={"id": 2, "v": "x"}))
    bad_sync["payload"]["timestamp"]["systemTime"] = "soon"
    bad_event = json.loads(_message("INSERT", "3", after={"id": 3, "v": "x"}))
    bad_event["payload"]["timestamp"] = {"eventTime": 1.5, "systemTime": "soon"}
    lines = [json.dumps(m) for m in (unknown, bad_sync, bad_event)] + [_message("INSERT", "4", after={"id": 4}) + " {}"]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    events, rejects, decoded = decode("dataworks-json", tmp_path)
    (event,) = events
    assert (event["event_time"], event["event_time_unit"], event["sync_time"]) == (None, None, None)
    assert {k: event["meta"][k] for k in ("eventTime", "systemTime", "checkpointTime")} == dict.fromkeys(
        ("eventTime", "systemTime", "checkpointTime"), "-1"
    )
    assert [(r["source_line"], r["reason"]) for r in rejects] == [
        (2, "sync time is neither an epoch number nor a date-time"),
        (3, "event time is neither an epoch number nor a date-time"),  # the event time is checked first
        (4, "not a valid JSON object"),  # text after the object
    ]
    assert decoded.counts == {"read": 4, "decoded": 1, "rejected": 3, "filtered": 0, "events": 1}
