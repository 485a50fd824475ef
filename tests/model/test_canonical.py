"""Value normalisation of the canonical table, checked against values computed by hand."""

from __future__ import annotations

import pytest

from cdc_pipelines.model import canonical as C


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
def test_epoch_to_instant_text(text, expected):
    assert C.epoch_to_instant_text(text) == expected


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
def test_integer_to_temporal_text(value, logical, unit, expected):
    assert C.integer_to_temporal_text(value, logical, unit) == expected


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
def test_time_units(text, unit):
    _, got = C.time_of(text)
    assert got == unit


def test_base16_to_base64():
    assert C.base16_to_base64("6A6b") == "ams="
    assert C.base16_to_base64("XYZ") is None
    assert C.base16_to_base64("") == ""


def test_logical_type_names():
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
        assert C.logical_type(name) == logical


@pytest.mark.parametrize(
    ("text", "micros", "unit"),
    [
        ("1609344671", 1609344671_000000, "s"),
        ("1609344671123", 1609344671_123000, "ms"),
        ("1606233662.012345", 1606233662_012345, "us"),
        ("1609344671000000999", 1609344671_000000, "ns"),
        ("-1", -1_000000, "s"),
        ("2020-11-25 00:01:02.5", 1606262462_500000, "ms"),
        ("2020-11-25T08:01:02+08:00", 1606262462_000000, "s"),
        ("yesterday", None, "s"),
    ],
)
def test_time_of_gives_exact_epoch_micros(text, micros, unit):
    assert C.time_of(text) == (micros, unit)


@pytest.mark.parametrize(
    ("value", "logical", "expected"),
    [
        ("TRUE", "BOOLEAN", "true"),
        ("2", "BOOLEAN", None),
        ("+12", "INT", "+12"),
        ("1.5", "INT", None),
        ("1E+2", "DECIMAL", "1E+2"),
        ("-Infinity", "DOUBLE", "-Infinity"),
        ("2024-02-30x", "DATE", None),
        ("2020-11-25 00:01:02+08:00", "TIMESTAMP", "2020-11-24T16:01:02Z"),
        ("aGk=", "BYTES", "aGk="),
        ("aGk", "BYTES", None),
    ],
)
def test_normalise_value(value, logical, expected):
    assert C.normalise_value(value, logical) == expected


def test_session_is_utc_and_keeps_last_duplicate_key(spark):
    from cdc_pipelines.runtime.session import DEFAULT_CONF

    assert spark.conf.get("spark.sql.session.timeZone") == DEFAULT_CONF["spark.sql.session.timeZone"] == "UTC"
    assert spark.conf.get("spark.sql.mapKeyDedupPolicy") == "LAST_WIN"
