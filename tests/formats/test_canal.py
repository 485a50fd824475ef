"""Canal JSON (OMS, seed 000): rows, types, multi-row messages and the `old` overlay."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.conftest import resource
from tests.formats.seed_values import DOUBLE_MIN_EXPANSION

ROW = {
    "col1": "2020-11-25 00:01:02",
    "col2": "hello world",
    "col3": "1.2222",
    "col4": DOUBLE_MIN_EXPANSION,
    "col5": "129",
    "col6": "00:01:02",
    "col7": "2147483646",
    "col8": "9223372036854775806",
    "col9": "aGVsbG8gd29ybGQ=",
    "col10": "3",
    "col11": "2020-11-25",
    "col12": DOUBLE_MIN_EXPANSION,
    "col13": "10223372036854775806",
    "col14": "2020-11-24T16:01:02.012345Z",
}
TYPES = {
    "col1": "DATETIME",
    "col2": "STRING",
    "col3": "FLOAT",
    "col4": "DOUBLE",
    "col5": "INT",
    "col6": "TIME",
    "col7": "INT",
    "col8": "INT",
    "col9": "BYTES",
    "col10": "INT",
    "col11": "DATE",
    "col12": "DECIMAL",
    "col13": "INT",
    "col14": "TIMESTAMP",
}


@pytest.fixture(scope="module")
def seed(decode):
    return decode("oms-canal", resource("oms-canal", "seed.jsonl"))


def test_seed_rows(seed):
    events, rejects, _ = seed
    assert rejects == []
    insert, update, delete, ddl = events
    assert [e["op"] for e in events] == ["INSERT", "UPDATE", "DELETE", "DDL"]
    assert (insert["before"], insert["after"]) == (None, ROW)
    assert update["after"] == ROW | {"col2": "hello world 2020"}
    # `old` names column "col" (not in `data`): the before image is data overlaid with old
    assert update["before"] == ROW | {"col2": "hello world 2020", "col": "hello world"}
    assert json.loads(update["meta"]["cdc.changed_columns"]) == ["col"]
    assert (delete["before"], delete["after"]) == (ROW, None)
    assert delete["pk_columns"] == ["int8", "int16"]
    for e in (insert, update):
        assert e["pk_columns"] == ["col1", "col2"]
    for e in (insert, update, delete):
        assert (e["db"], e["table_name"]) == ("database", "table")
        assert (e["event_time"], e["event_time_unit"]) == (dt.datetime(2020, 12, 30, 16, 11, 11), "ms")
        assert {k: v for k, v in e["column_types"].items() if k != "col"} == TYPES
        assert e["source_types"]["col8"] == "int64" and e["source_types"]["col9"] == "blob"
        assert json.loads(e["meta"]["sqlType"])["col9"] == "2004"
    assert insert["sync_time"] == dt.datetime(2021, 4, 13, 14, 17, 9, 26000)
    assert insert["meta"]["ts"] == "1618323429026"


def test_seed_ddl(seed):
    ddl = seed[0][3]
    assert (ddl["op"], ddl["raw_op"], ddl["db"], ddl["table_name"]) == (
        "DDL",
        "ALTER",
        "connector_test",
        "all_mysql_type_test",
    )
    assert ddl["ddl"].startswith("alter table connector_test.all_mysql_type_test add column c90")
    assert (ddl["before"], ddl["after"], ddl["event_time_unit"]) == (None, None, "ms")


def test_multi_row_message_pairs_old_by_index(decode, tmp_path):
    message = {
        "database": "shop",
        "table": "t",
        "type": "UPDATE",
        "es": 1700000000123,
        "ts": 1700000000456,
        "isDdl": False,
        "pkNames": ["id"],
        "mysqlType": {"id": "bigint", "v": "decimal(40,10)"},
        "data": [{"id": "1", "v": "1.50"}, {"id": "2", "v": "2.50"}, {"id": "3", "v": "3.50"}],
        "old": [{"v": "1.00"}, {"v": "2.00"}, {"v": "3.00"}],
    }
    path = tmp_path / "multi.jsonl"
    path.write_text(json.dumps(message) + "\n")
    events, rejects, _ = decode("oms-canal", path)
    assert rejects == []
    assert [(e["before"], e["after"]) for e in events] == [
        ({"id": str(i), "v": f"{i}.00"}, {"id": str(i), "v": f"{i}.50"}) for i in (1, 2, 3)
    ]
    assert len({e["event_id"] for e in events}) == 3
    assert all(e["source_line"] == 1 for e in events)


def test_multi_row_message_is_rejected_whole(decode, tmp_path):
    message = {
        "database": "shop",
        "table": "t",
        "type": "INSERT",
        "es": 1700000000123,
        "isDdl": False,
        "mysqlType": {"id": "bigint", "flag": "boolean"},
        "data": [{"id": "1", "flag": "1"}, {"id": "2", "flag": "maybe"}],
    }
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(message) + "\n")
    events, rejects, decoded = decode("oms-canal", path)
    assert events == []
    assert [r["reason"] for r in rejects] == ["value does not fit its type in column(s) flag:BOOLEAN"]


def test_dts_new_style_delete_and_ddl(decode):
    events, rejects, _ = decode("dts-canal", resource("dts-canal", "seed.jsonl"))
    assert rejects == []
    delete, ddl = events
    assert (delete["op"], delete["before"], delete["after"]) == (
        "DELETE",
        {"id": "500000287", "shipping_type": None},
        None,
    )
    assert delete["column_types"] == {"id": "INT", "shipping_type": "STRING"} and delete["pk_columns"] == ["id"]
    assert (delete["seq"], delete["meta"]["id"]) == ("58", "58")
    assert (delete["event_time"], delete["sync_time"]) == (
        dt.datetime(2020, 9, 15, 9, 24, 54),
        dt.datetime(2020, 9, 15, 9, 24, 54, 771000),
    )
    assert (ddl["op"], ddl["raw_op"], ddl["ddl"], ddl["table_name"]) == ("DDL", "DDL", "eg:createxxx", "tablename")


def test_dts_legacy_delete_carries_its_row_in_old(decode):
    events, rejects, _ = decode("dts-canal", resource("dts-canal", "seed-legacy.jsonl"), legacy="true")
    assert rejects == []
    assert [(e["op"], e["before"], e["after"]) for e in events] == [("DELETE", {"shipping_type": "aaa"}, None)]
    # read without the option, the same message has no rows where the new format expects them
    _, rejects, _ = decode("dts-canal", resource("dts-canal", "seed-legacy.jsonl"))
    assert [r["reason"] for r in rejects] == ["canal DELETE message without rows"]


def test_dts_legacy_update_and_full_load(decode, tmp_path):
    base = (
        '"database":"d","table":"t","isDdl":false,"es":1600161894000,"ts":1600161894771,'
        '"mysqlType":{"id":"bigint","v":"varchar"}'
    )
    lines = [
        f'{{{base},"type":"UPDATE","data":[{{"id":"1","v":"before"}}],"old":[{{"id":"1","v":"after"}}]}}',
        f'{{{base},"type":"INIT","old":[{{"id":"2","v":"loaded"}}]}}',
    ]
    path = tmp_path / "legacy.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events, rejects, _ = decode("dts-canal", path, legacy="true")
    assert rejects == []
    update, init = events
    assert (update["before"], update["after"]) == ({"id": "1", "v": "before"}, {"id": "1", "v": "after"})
    assert (init["op"], init["raw_op"], init["after"]) == ("INSERT", "INIT", {"id": "2", "v": "loaded"})


def test_canal_binary_and_timezone_options(decode, tmp_path):
    line = {
        "database": "d",
        "table": "t",
        "type": "INSERT",
        "isDdl": False,
        "es": 1600161894000,
        "mysqlType": {"b": "varbinary(8)", "ts": "timestamp(3)", "p": "point"},
        "sqlType": {"b": -3, "ts": 93, "p": -2},
        "data": [{"b": "\u00ff\u0000a", "ts": "2023-03-23 15:00:10.120", "p": "\u0001"}],
    }
    path = tmp_path / "canal.jsonl"
    path.write_text(json.dumps(line) + "\n")
    events, rejects, _ = decode("oms-canal", path, binary="latin1", timezone="Asia/Shanghai")
    assert rejects == []
    assert events[0]["after"] == {"b": "/wBh", "ts": "2023-03-23T07:00:10.120Z", "p": "AQ=="}
    assert events[0]["column_types"] == {"b": "BYTES", "ts": "TIMESTAMP", "p": "BYTES"}
    _, rejects, _ = decode("oms-canal", path)
    assert [r["reason"] for r in rejects] == ["value does not fit its type in column(s) b:BYTES, p:BYTES"]
