"""Seed 000 Default and DefaultExtendColumnType examples, field by field."""

from __future__ import annotations

import datetime as dt

import pytest

from cdc_pipelines.formats import get_codec
from tests.conftest import resource
from tests.formats.seed_values import DOUBLE_MIN_EXPANSION

ALTER = "alter table connector_test.all_mysql_type_test add column c90 varchar(30) default \"test\" comment 'test'"
INSERT_ROW = {
    "col1": "3",
    "col2": "129",
    "col3": "2147483646",
    "col4": "9223372036854775806",
    "col5": "10223372036854775806",
    "col6": "1.2222",
    "col7": "9.999999",
    "col8": "hello world",
    "col9": "aGVsbG8gd29ybGQ=",
    "col10": "9.99999999999",
    "col11": "2020-11-25",
    "col12": "00:01:02",
    "col13": "2020-11-25 00:01:02",
    "col14": "1606233662.012345",
}
UPDATE_BEFORE = INSERT_ROW | {"col7": "9.999999999999", "col10": "9.999999999999"}
UPDATE_AFTER = UPDATE_BEFORE | {"col8": "hello world 2020"}
DELETE_ROW = {k: v for k, v in INSERT_ROW.items() if k != "col6"} | {
    "col16": "1.2222",
    "col7": "9.99999999",
    "col10": "9.999999999",
}
EXTEND_ROW = INSERT_ROW | {"col7": DOUBLE_MIN_EXPANSION, "col10": DOUBLE_MIN_EXPANSION}
LIGHT_TYPES = {
    "int8": "TINYINT",
    "int16": "SMALLINT",
    "int32": "INT",
    "int64": "INT64",
    "bigInt": "BIGINT",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "string": "VARCHAR",
    "bytes": "BLOB",
    "decimal": "DECIMAL",
    "localDate": "DATE",
    "localTime": "TIME",
    "localDateTime": "DATETIME",
    "timestamp_in_long": "TIMESTAMP",
}
SECONDS = dt.datetime(2020, 12, 30, 16, 11, 11)


@pytest.fixture(scope="module")
def default(decode):
    return decode("oms-default", resource("oms-default", "seed.jsonl"))


@pytest.fixture(scope="module")
def extend(decode):
    return decode("oms-default-extend", resource("oms-default-extend", "seed.jsonl"))


def test_default_row_events(default):
    events, rejects, _ = default
    assert rejects == []
    assert [(e["op"], e["raw_op"], e["source_line"]) for e in events] == [
        ("INSERT", "INSERT", 1),
        ("UPDATE", "UPDATE", 2),
        ("DELETE", "DELETE", 3),
        ("DDL", "DDL", 4),
    ]
    insert, update, delete, _ = events
    for e in (insert, update, delete):
        assert (e["db"], e["table_name"], e["pk_columns"]) == ("tenant.database", "table_name", ["id1", "id2"])
        assert (e["event_time"], e["event_time_unit"]) == (SECONDS, "s")
        assert e["meta"]["record_primary_value"] == "3\u0001" + "129"
        assert e["meta"]["dbType"] == "OB_MYSQL"
        assert set(e["column_types"].values()) == {"UNKNOWN"}
    assert (insert["before"], insert["after"]) == (None, INSERT_ROW)
    assert (update["before"], update["after"]) == (UPDATE_BEFORE, UPDATE_AFTER)
    assert (delete["before"], delete["after"]) == (DELETE_ROW, None)


def test_default_keeps_number_vs_string(default):
    insert = default[0][0]
    numbers = insert["meta"]["cdc.json_numbers"]
    assert '"col5"' in numbers and '"col14"' not in numbers and '"col8"' not in numbers


def test_default_ddl(default):
    ddl = default[0][3]
    assert (ddl["db"], ddl["table_name"], ddl["ddl"]) == ("connector_test", "all_mysql_type_test", ALTER)
    assert (ddl["before"], ddl["after"], ddl["pk_columns"]) == (None, None, None)
    assert ddl["event_time"] == dt.datetime(2022, 12, 16, 7, 50, 57)
    assert ddl["meta"]["ddlType"] == "ALTER_TABLE"
    assert ddl["position"] == "1671177057"


def test_extend_types_and_values(extend):
    events, rejects, _ = extend
    assert rejects == []
    insert, update, delete, ddl = events
    assert insert["after"] == EXTEND_ROW
    assert update["before"] == EXTEND_ROW and update["after"] == EXTEND_ROW | {"col8": "hello world 2020"}
    assert delete["before"] == EXTEND_ROW and delete["after"] is None
    for e in (insert, update, delete):
        assert e["source_types"] == LIGHT_TYPES
        assert "__light_type" not in (e["after"] or e["before"])
        assert e["column_types"]["int64"] == "INT"
        assert e["column_types"]["bytes"] == "BYTES"
        assert e["column_types"]["timestamp_in_long"] == "TIMESTAMP"
        assert e["column_types"]["decimal"] == "DECIMAL"
        assert e["column_types"]["col7"] == "UNKNOWN"
    assert (ddl["op"], ddl["ddl"], ddl["source_types"]) == ("DDL", ALTER, {"ddl": "VAR_STRING"})
    assert ddl["event_time"] == dt.datetime(2022, 12, 16, 7, 53, 29)


def test_extend_light_type_entries_without_a_type():
    """A `__light_type` entry that is null, or an object without `schemaType`, gives its column a null type."""
    light = '{"a": null, "b": {}, "c": {"schemaType": "INT"}}'
    message = (
        '{"allMetaData": {"table_name": "t"}, "recordType": "INSERT", "postStruct": {"a": "1", "b": "2", "c": "3", '
    )
    (event,) = get_codec("oms-default-extend").decode(f'{message}"__light_type": {light}}}}}'.encode(), {})
    assert event["source_types"] == {"a": None, "b": None, "c": "INT"}
    assert event["after"] == {"a": "1", "b": "2", "c": "3"}
