"""SharePlex JSON as OMS writes it (seed 000)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.conftest import resource
from tests.formats.seed_values import DOUBLE_MIN_EXPANSION

ROW = {
    "col1": "2020-11-25 00:01:02",
    "col2": "hello world",
    "col3": "INTERVAL '3' DAY",
    "col4": "1.2222",
    "col5": DOUBLE_MIN_EXPANSION,
    "col6": "129",
    "col7": "00:01:02",
    "col8": "1",
    "col9": "2020-11-25 00:01:02.012345 Asia/Shanghai",
    "col10": "2147483646",
    "col11": "9223372036854775806",
    "col12": "aGVsbG8gd29ybGQ=",
    "col13": "INTERVAL '4' YEAR",
    "col14": "3",
    "col15": "2020-11-25",
    "col16": DOUBLE_MIN_EXPANSION,
    "col17": "10223372036854775806",
    "col18": "1606233662.012345",
}


@pytest.fixture(scope="module")
def seed(decode):
    return decode("oms-shareplex", resource("oms-shareplex", "seed.jsonl"))


def test_rows(seed):
    events, rejects, _ = seed
    assert rejects == []
    assert [(e["op"], e["raw_op"]) for e in events] == [
        ("INSERT", "ins"),
        ("UPDATE", "upd"),
        ("DELETE", "del"),
        ("DDL", "ddl"),
    ]
    insert, update, delete, _ = events
    assert (insert["before"], insert["after"]) == (None, ROW)
    # `key` is the before image; `data` holds only the changed column
    assert (update["before"], update["after"]) == (ROW, ROW | {"col": "hello world 2020"})
    assert json.loads(update["meta"]["cdc.changed_columns"]) == ["col"]
    assert (delete["before"], delete["after"]) == (ROW, None)
    for e in (insert, update, delete):
        assert (e["db"], e["table_name"]) == ("mock_database", "mock_table")
        assert (e["event_time"], e["event_time_unit"]) == (dt.datetime(2020, 11, 25, 0, 1, 2), "s")
        assert (e["tx_id"], e["seq"], e["position"]) == ("shareplex_transaction_id", "1", "123456789")
        assert e["meta"]["meta.rowid"] == "mock_database.mock_table-3\u0001" + "129"
        assert (e["meta"]["meta.idx"], e["meta"]["meta.size"]) == ("1/10", "10")
        assert e["pk_columns"] is None
    assert insert["sync_time"] == dt.datetime(2020, 12, 7, 13, 22)


def test_ddl(seed):
    ddl = seed[0][3]
    assert (ddl["db"], ddl["table_name"]) == ("connector_test", "all_mysql_type_test")
    assert ddl["ddl"].endswith("default \"test\" comment 'test'")
    assert (ddl["before"], ddl["after"], ddl["tx_id"], ddl["position"]) == (None, None, None, None)
    assert ddl["event_time"] == dt.datetime(2022, 12, 16, 15, 53, 29)
