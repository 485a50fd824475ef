"""The DDL dialect from the names formats carry, or the catalog's `ddl_dialect:`."""

from __future__ import annotations

import pytest

from cdc_pipelines.schema_changes.dialects import dialect_of, event_dialect

NAMES = [
    # OMS allMetaData.dbType
    ("OB_MYSQL", "mysql"), ("OB_ORACLE", "oracle"), ("MYSQL", "mysql"), ("ORACLE", "oracle"),
    ("POSTGRESQL", "postgres"),
    # Debezium source.connector
    ("mysql", "mysql"), ("postgresql", "postgres"), ("oracle", "oracle"),
    # DataWorks dbType, DTS Avro source.sourceType
    ("MySQL", "mysql"), ("ob_mysql", "mysql"), ("PostgreSQL", "postgres"), ("Oracle", "oracle"),
    # sqlglot's names, as a catalog may give them
    ("postgres", "postgres"),
    # none of the dialects read here
    ("SQLServer", None), ("MongoDB", None), ("", None), (None, None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "dialect"), NAMES)
def test_dialect_of(name, dialect):
    assert dialect_of(name) == dialect


def test_the_message_names_the_dialect_before_the_catalog():
    assert event_dialect({"dbType": "OB_ORACLE"}, "mysql") == "oracle"
    assert event_dialect({"source.connector": "postgresql"}, "mysql") == "postgres"
    assert event_dialect({"source.sourceType": "MySQL"}, "oracle") == "mysql"
    assert event_dialect({"dbType": "SQLServer"}, "OB_ORACLE") == "oracle"
    assert event_dialect(None, "postgresql") == "postgres"
    assert event_dialect({}, None) is None
