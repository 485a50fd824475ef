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


def test_dts_examples(decode):
    events, rejects, _ = decode("dts-shareplex", resource("dts-shareplex", "seed.jsonl"))
    assert rejects == []
    insert, update, delete = events
    assert (insert["op"], insert["db"], insert["table_name"], insert["after"]) == (
        "INSERT", "CL_BIZ1", "MIO_LOG", {"MIO_LOG_ID": "32539737"},
    )  # fmt: skip
    assert (insert["tx_id"], insert["seq"], insert["position"]) == ("7.0.411499", "1", "14589063118712")
    assert (insert["meta"]["meta.userid"], insert["meta"]["meta.rowid"]) == ("84", "AAATGpAAIAAItcIAAA")
    key = {"MIO_LOG_ID": "32537893", "PLNMIO_REC_ID": "31557806", "POL_CODE": None, "CNTR_TYPE": None}
    assert update["before"] == key | {"CNTR_NO": "1171201606syui26"}
    assert update["after"] == key | {"CNTR_NO": "1171201606"}
    assert delete["before"]["MIO_LOG_ID"] == "32539739" and delete["table_name"] is None
    assert delete["event_time"] == dt.datetime(2017, 6, 16, 15, 51, 35)


@pytest.mark.parametrize(("format_id", "zone"), [("oms-shareplex", "+08:00"), ("dts-shareplex", "Asia/Shanghai")])
def test_timezone_option_reads_zone_less_times(decode, format_id, zone):
    default, _, _ = decode(format_id, resource(format_id, "seed.jsonl"))
    shifted, rejects, _ = decode(format_id, resource(format_id, "seed.jsonl"), timezone=zone)
    assert rejects == [] and len(shifted) == len(default) > 0
    eight = dt.timedelta(hours=8)
    for d, s in zip(default, shifted, strict=True):
        # `time` / `posttime` are wall clocks in the zone: 8 hours earlier in UTC; the images (DATETIME
        # text such as col1 included, SharePlex has no types) are untouched
        assert (s["event_time"], s["event_time_unit"]) == (d["event_time"] - eight, d["event_time_unit"])
        assert s["sync_time"] == (None if d["sync_time"] is None else d["sync_time"] - eight)
        assert (s["before"], s["after"]) == (d["before"], d["after"])
    assert shifted[0]["event_time"] == (
        dt.datetime(2020, 11, 24, 16, 1, 2) if format_id == "oms-shareplex" else dt.datetime(2017, 6, 16, 6, 24, 34)
    )


def test_dts_split_update_and_long_op_names(decode, tmp_path):
    meta = '"table":"S.T","trans":"9.1","rowid":"AAA","time":"2017-06-16T14:24:34Z"'
    lines = [
        f'{{"meta":{{"op":"UPDATE AFTER",{meta},"seq":2}},"data":{{"ID":"1","V":"new"}}}}',
        f'{{"meta":{{"op":"UPDATE BEFORE",{meta},"seq":1}},"data":{{"ID":"1","V":"old"}}}}',
        f'{{"meta":{{"op":"TRUNCATE",{meta}}}}}',
        f'{{"meta":{{"op":"DROP COLUMN",{meta}}},"sql":{{"ddl":"ALTER TABLE S.T DROP COLUMN V"}}}}',
        f'{{"meta":{{"op":"MERGE",{meta}}}}}',
    ]
    path = tmp_path / "dts.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events, rejects, _ = decode("dts-shareplex", path)
    assert [(e["op"], e["raw_op"]) for e in events] == [
        ("UPDATE", "UPDATE AFTER"),
        ("TRUNCATE", "TRUNCATE"),
        ("DDL", "DROP COLUMN"),
    ]
    assert (events[0]["before"], events[0]["after"]) == ({"ID": "1", "V": "old"}, {"ID": "1", "V": "new"})
    assert events[2]["ddl"] == "ALTER TABLE S.T DROP COLUMN V"
    assert events[0]["event_time"] == dt.datetime(2017, 6, 16, 14, 24, 34)
    assert [(r["source_line"], r["reason"]) for r in rejects] == [(5, "unknown meta.op 'MERGE'")]
