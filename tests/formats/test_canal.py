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
