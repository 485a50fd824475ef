"""Value normalisation of the canonical table, checked against values computed by hand."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from cdc_pipelines import canonical as C
from cdc_pipelines.spark import DEFAULT_CONF


def _one(spark, column):
    return spark.range(1).select(column.alias("v")).first().v


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1606233662.012345", "2020-11-24T16:01:02.012345Z"),
        ("1606233662", "2020-11-24T16:01:02Z"),
        ("1606233662012", "2020-11-24T16:01:02.012Z"),
        ("1606233662012345", "2020-11-24T16:01:02.012345Z"),
        ("1606233662012345678", "2020-11-24T16:01:02.012345678Z"),
        ("1590315269000.123456789", "2020-05-24T10:14:29.123456789Z"),
        ("0", "1970-01-01T00:00:00Z"),
        ("not a number", None),
    ],
)
def test_epoch_to_instant_text(spark, text, expected):
    assert _one(spark, C.epoch_to_instant_text(F.lit(text))) == expected


@pytest.mark.parametrize(
    ("value", "logical", "unit", "expected"),
    [
        ("19311", "DATE", "days", "2022-11-15"),
        ("-1", "DATE", "days", "1969-12-31"),
        ("36060000000", "TIME", "us", "10:01:00.000000"),
        ("45296123", "TIME", "ms", "12:34:56.123"),
        ("1668489131000", "DATETIME", "ms", "2022-11-15 05:12:11.000"),
        ("-1", "DATETIME", "ms", "1969-12-31 23:59:59.999"),
        ("1668489131000000001", "DATETIME", "ns", "2022-11-15 05:12:11.000000001"),
    ],
)
def test_integer_to_temporal_text(spark, value, logical, unit, expected):
    assert _one(spark, C.integer_to_temporal_text(F.lit(value), F.lit(logical), F.lit(unit))) == expected


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("1609344671", "s"),
        ("1609344671000", "ms"),
        ("1609344671000000", "us"),
        ("1609344671000000000", "ns"),
        ("1606233662.012345", "us"),
        ("2020-11-25T00:01:02", "s"),
        ("2020-11-25 00:01:02.123", "ms"),
    ],
)
def test_time_units(spark, text, unit):
    _, got = C.time_of(F.lit(text))
    assert _one(spark, got) == unit


def test_base16_to_base64(spark):
    assert _one(spark, C.base16_to_base64(F.lit("6A6b"))) == "ams="
    assert _one(spark, C.base16_to_base64(F.lit("XYZ"))) is None
    assert _one(spark, C.base16_to_base64(F.lit(""))) == ""


def test_logical_type_names(spark):
    names = {
        "varchar(20)": "STRING",
        "BIGINT UNSIGNED": "INT",
        "decimal(65,30)": "DECIMAL",
        "TIMESTAMP": "TIMESTAMP",
        "INTERVAL_DAY_TO_SECOND": "INTERVAL",
        "LONG": "INT",
        "geometry": "BYTES",
        "weird": "UNKNOWN",
    }
    for name, logical in names.items():
        assert _one(spark, C.logical_type(F.lit(name))) == logical


def test_session_is_utc_and_keeps_last_duplicate_key(spark):
    assert spark.conf.get("spark.sql.session.timeZone") == DEFAULT_CONF["spark.sql.session.timeZone"] == "UTC"
    assert spark.conf.get("spark.sql.mapKeyDedupPolicy") == "LAST_WIN"
