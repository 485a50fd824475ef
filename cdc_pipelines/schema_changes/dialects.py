"""Which SQL dialect a topic's DDL is written in, from the names the formats carry or the catalog's `ddl_dialect:`.

OceanBase's MySQL mode and Oracle mode write the DDL of MySQL and of Oracle, so they read as those. No parser
is imported here: the catalog checks `ddl_dialect:` with this table without loading sqlglot.
"""

from __future__ import annotations

from collections.abc import Mapping

# sqlglot's names of the dialects DDL is read in
MYSQL, ORACLE, POSTGRES = "mysql", "oracle", "postgres"
DDL_DIALECTS = (MYSQL, ORACLE, POSTGRES)

# A source's name, lower case -> its DDL dialect. The names: OMS `allMetaData.dbType` (OB_MYSQL, OB_ORACLE,
# MYSQL, ORACLE, POSTGRESQL), Debezium's `source.connector` (mysql, postgresql, oracle; OMS writes OB_MYSQL),
# DataWorks' `dbType` (MySQL, ob_mysql), DTS Avro's `source.sourceType` (MySQL, Oracle, PostgreSQL), and
# sqlglot's own names, which `ddl_dialect:` may also use.
DIALECT_OF_SOURCE = {
    **dict.fromkeys(["mysql", "ob_mysql", "mariadb"], MYSQL),
    **dict.fromkeys(["oracle", "ob_oracle"], ORACLE),
    **dict.fromkeys(["postgresql", "postgres"], POSTGRES),
}


def dialect_of(name: str | None) -> str | None:
    """The sqlglot dialect of a source name as a format or the catalog gives it; None when it names none
    of the dialects read here (SQLServer, MongoDB, an empty name): the caller then takes the catalog's."""
    return DIALECT_OF_SOURCE.get(name.strip().lower()) if name else None


# the meta keys of a DDL event that name its source, in the order they are asked: OMS and DataWorks
# `dbType`, Debezium's `source.connector`, DTS Avro's `source.sourceType`
SOURCE_NAME_KEYS = ("dbType", "source.connector", "source.sourceType")


def source_name(meta: Mapping[str, str | None] | None) -> str | None:
    """The source's name an event's message gives (the first of `SOURCE_NAME_KEYS` naming a dialect); None
    where it names none."""
    return next((meta[k] for k in SOURCE_NAME_KEYS if dialect_of((meta or {}).get(k))), None)


def event_dialect(meta: Mapping[str, str | None] | None, catalog_dialect: str | None = None) -> str | None:
    """The dialect of a DDL event: the one its message names where it names one, else the catalog's
    `ddl_dialect:`; None where neither does."""
    return dialect_of(source_name(meta)) or dialect_of(catalog_dialect)
