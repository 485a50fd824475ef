"""Declared SQL types -> logical and Spark types, per dialect, and the table agreeing with the formats' own."""

from __future__ import annotations

import pytest

from cdc_pipelines.model.canonical import SOURCE_TYPE_TO_LOGICAL
from cdc_pipelines.schema_changes.declared_types import ALL, DECLARED_TYPES, declared_type

# declared type, dialect, logical type, Spark type
TYPES = [
    ("DECIMAL(10,2)", "mysql", "DECIMAL", "decimal(10,2)"),
    ("decimal", "mysql", "DECIMAL", "decimal(10,0)"),  # MySQL's DECIMAL is DECIMAL(10,0)
    ("DECIMAL(40,2)", "mysql", "DECIMAL", "string"),  # more than Spark's 38 digits
    ("BIGINT", "mysql", "INT", "bigint"),
    ("bigint(20) unsigned", "mysql", "INT", "decimal(20,0)"),
    ("int(11) unsigned zerofill", "mysql", "INT", "bigint"),
    ("tinyint(1)", "mysql", "INT", "bigint"),
    ("VARCHAR(30)", "mysql", "STRING", "string"),
    ("varchar(10) character set utf8mb4", "mysql", "STRING", "string"),
    ("enum('a','b')", "mysql", "STRING", "string"),
    ("DATETIME(6)", "mysql", "DATETIME", "timestamp_ntz"),
    ("TIMESTAMP(3)", "mysql", "TIMESTAMP", "timestamp"),
    ("double", "mysql", "DOUBLE", "string"),
    ("real", "mysql", "DOUBLE", "string"),  # REAL is DOUBLE in MySQL unless REAL_AS_FLOAT
    ("json", "mysql", "JSON", "string"),
    ("longblob", "mysql", "BYTES", "binary"),
    ("year", "mysql", "INT", "bigint"),
    ("time(3)", "mysql", "TIME", "string"),
    ("NUMBER(10)", "oracle", "DECIMAL", "decimal(10,0)"),
    ("NUMBER(12,2)", "oracle", "DECIMAL", "decimal(12,2)"),
    ("NUMBER", "oracle", "DECIMAL", "string"),  # 38 digits at any scale: text
    ("NUMBER(5,-2)", "oracle", "DECIMAL", "string"),
    ("DATE", "oracle", "DATETIME", "timestamp_ntz"),  # Oracle's DATE has a time of day
    ("TIMESTAMP", "oracle", "DATETIME", "timestamp_ntz"),
    ("TIMESTAMP(9)", "oracle", "DATETIME", "string"),  # nanoseconds do not fit Spark's microseconds
    ("TIMESTAMP(6) WITH TIME ZONE", "oracle", "ZONED_DATETIME", "string"),
    ("TIMESTAMP WITH LOCAL TIME ZONE", "oracle", "TIMESTAMP", "timestamp"),
    ("VARCHAR2(20 CHAR)", "oracle", "STRING", "string"),
    ("LONG", "oracle", "STRING", "string"),
    ("LONG RAW", "oracle", "BYTES", "binary"),
    ("BINARY_DOUBLE", "oracle", "DOUBLE", "string"),
    ("INTERVAL DAY(2) TO SECOND(6)", "oracle", "INTERVAL", "string"),
    ("timestamptz", "postgres", "TIMESTAMP", "timestamp"),
    ("timestamp with time zone", "postgres", "TIMESTAMP", "timestamp"),
    ("timestamp(3)", "postgres", "DATETIME", "timestamp_ntz"),
    ("bytea", "postgres", "BYTES", "binary"),
    ("numeric", "postgres", "DECIMAL", "string"),
    ("numeric(20,4)", "postgres", "DECIMAL", "decimal(20,4)"),
    ("double precision", "postgres", "DOUBLE", "string"),
    ("character varying(10)", "postgres", "STRING", "string"),
    ("bool", "postgres", "BOOLEAN", "boolean"),
    ("date", "postgres", "DATE", "date"),
    ("int[]", "postgres", "UNKNOWN", "string"),
    ("geography", "postgres", "UNKNOWN", "string"),
]


@pytest.mark.parametrize(("declared", "dialect", "logical", "spark"), TYPES, ids=[f"{t[1]}-{t[0]}" for t in TYPES])
def test_declared_type(declared, dialect, logical, spark):
    typed = declared_type(declared, dialect)
    assert (typed.logical_type, typed.spark_type) == (logical, spark)


def test_the_common_rows_agree_with_the_formats_source_types():
    """Where a name's meaning is the same in every dialect, it is the one the formats give it (canal's
    mysqlType, OMS's column types): a declared column and its rows take one logical type."""
    differ = {
        name: (logical, SOURCE_TYPE_TO_LOGICAL[name])
        for dialects, names, logical, _ in DECLARED_TYPES
        if dialects == ALL
        for name in names
        if name in SOURCE_TYPE_TO_LOGICAL and SOURCE_TYPE_TO_LOGICAL[name] != logical
    }
    assert differ == {}
