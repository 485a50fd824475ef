"""A declared SQL type -> the project's logical type (the `column_types` vocabulary of the formats) and the
Spark type a snapshot column of it takes.

One table, `DECLARED_TYPES`: each row names base types (lower case, without length, precision or UNSIGNED)
for some dialects. The first row that names a type for the dialect wins, so a dialect's own meaning comes
before the common one: Oracle's DATE carries a time of day (DATETIME) and its LONG is text; PostgreSQL's and
Oracle's TIMESTAMP is a local date-time, MySQL's an instant. The logical types agree with the source-type
table the formats use (`model.canonical.SOURCE_TYPE_TO_LOGICAL`) wherever both name a type; a test holds them.

The Spark types are the ones `snapshots.values.spark_type` gives values of that logical type, so a declared
column and its rows agree: integers `bigint`, floating point as text (`string`, digit-exact, as the snapshot
keeps them), DECIMAL(p,s) `decimal(p,s)`. A type whose values may not fit its Spark type is text: a decimal of
more than 38 digits or of no declared precision (Oracle NUMBER, PostgreSQL numeric), a fraction of seconds
finer than microseconds, an unsigned BIGINT (`decimal(20,0)`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cdc_pipelines.schema_changes.dialects import DDL_DIALECTS, MYSQL, ORACLE, POSTGRES

ALL = DDL_DIALECTS
DECIMAL = "decimal"  # the Spark type is decimal(p,s) of the declared precision and scale
TIMESTAMP = "timestamp"  # `timestamp` up to microseconds, text for a finer declared fraction
TIMESTAMP_NTZ = "timestamp_ntz"

# (dialects, base type names, logical type, Spark type)
DECLARED_TYPES: tuple[tuple[tuple[str, ...], tuple[str, ...], str, str], ...] = (
    ((ORACLE,), ("date",), "DATETIME", TIMESTAMP_NTZ),
    ((ORACLE,), ("long",), "STRING", "string"),
    ((ORACLE, POSTGRES), ("timestamp", "timestamp without time zone"), "DATETIME", TIMESTAMP_NTZ),
    ((POSTGRES,), ("timestamptz", "timestamp with time zone"), "TIMESTAMP", TIMESTAMP),  # an instant, as MySQL's
    ((MYSQL,), ("bigint unsigned", "int8 unsigned", "serial"), "INT", "decimal(20,0)"),
    ((MYSQL,), ("real",), "DOUBLE", "string"),  # REAL is DOUBLE unless REAL_AS_FLOAT (as canal's override says)
    ((MYSQL,), ("timestamp",), "TIMESTAMP", TIMESTAMP),
    (ALL, ("bool", "boolean"), "BOOLEAN", "boolean"),
    (ALL, ("tinyint", "smallint", "mediumint", "int", "integer", "bigint", "int2", "int4", "int8", "year",
           "smallserial", "serial", "bigserial", "serial2", "serial4", "serial8"), "INT", "bigint"),
    (ALL, ("decimal", "numeric", "number", "dec", "fixed"), "DECIMAL", DECIMAL),
    (ALL, ("float", "real", "binary_float", "float4"), "FLOAT", "string"),
    (ALL, ("double", "double precision", "binary_double", "float8"), "DOUBLE", "string"),
    (ALL, ("char", "varchar", "character", "character varying", "nchar", "nvarchar", "varchar2", "nvarchar2",
           "national char", "national varchar", "bpchar", "tinytext", "text", "mediumtext", "longtext",
           "long varchar", "enum", "set", "clob", "nclob", "rowid", "urowid", "uuid", "xmltype", "xml", "citext",
           "inet", "cidr", "macaddr", "money"), "STRING", "string"),
    (ALL, ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bit", "raw", "long raw",
           "bfile", "bytea", "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
           "multipolygon", "geometrycollection", "geomcollection"), "BYTES", "binary"),
    (ALL, ("date",), "DATE", "date"),
    (ALL, ("time", "time without time zone", "time with time zone", "timetz"), "TIME", "string"),
    (ALL, ("datetime",), "DATETIME", TIMESTAMP_NTZ),
    (ALL, ("timestamp with local time zone",), "TIMESTAMP", TIMESTAMP),
    (ALL, ("timestamp with time zone",), "ZONED_DATETIME", "string"),
    (ALL, ("interval", "interval day to second", "interval year to month"), "INTERVAL", "string"),
    (ALL, ("json", "jsonb"), "JSON", "string"),
)  # fmt: skip

_BY_DIALECT: dict[str, dict[str, tuple[str, str]]] = {}
for _dialects, _names, _logical, _spark in DECLARED_TYPES:
    for _dialect in _dialects:
        for _name in _names:
            _BY_DIALECT.setdefault(_dialect, {}).setdefault(_name, (_logical, _spark))

_PARAMS = re.compile(r"\(([^()]*)\)")
_DECORATION = re.compile(r"\b(?:zerofill|signed)\b|\b(?:character set|charset|collate)\s+\S+")
_MAX_DECIMAL_DIGITS = 38
_MICROS = 6
# a decimal's precision and scale where it declares none: MySQL's DECIMAL is DECIMAL(10,0)
_DEFAULT_DECIMAL = {MYSQL: (10, 0)}


@dataclass(frozen=True)
class TypeOf:
    logical_type: str
    spark_type: str


def declared_type(declared: str, dialect: str) -> TypeOf:
    """The logical and Spark type of a type as DDL declares it (`DECIMAL(10,2)`, `NUMBER`, `timestamptz`,
    `bigint(20) unsigned`, `TIMESTAMP(6) WITH TIME ZONE`); UNKNOWN and text for a type not in the table."""
    text = declared.strip().lower()
    params = [p.strip() for group in _PARAMS.findall(text) for p in group.split(",")]
    base = " ".join(_DECORATION.sub("", _PARAMS.sub(" ", text)).split())
    if base.endswith("[]"):
        return TypeOf("UNKNOWN", "string")  # a PostgreSQL array: its text as the source writes it
    table = _BY_DIALECT.get(dialect, _BY_DIALECT[MYSQL])
    logical, spark = table.get(base) or table.get(base.removesuffix(" unsigned")) or ("UNKNOWN", "string")
    if spark == DECIMAL:
        spark = _decimal(params, dialect)
    elif spark in (TIMESTAMP, TIMESTAMP_NTZ) and params and params[0].isdigit() and int(params[0]) > _MICROS:
        spark = "string"
    return TypeOf(logical, spark)


def _decimal(params: list[str], dialect: str) -> str:
    """decimal(p,s) of the declared precision and scale; text where it declares none (Oracle's NUMBER holds
    38 digits at any scale) or more than Spark's 38 digits."""
    digits = [int(p) for p in params if p.lstrip("-").isdigit()]
    if len(digits) != len(params) or not digits and dialect not in _DEFAULT_DECIMAL:
        return "string"
    precision, scale = (digits + [0])[:2] if digits else _DEFAULT_DECIMAL[dialect]
    if not 0 <= scale <= precision <= _MAX_DECIMAL_DIGITS or precision == 0:
        return "string"
    return f"decimal({precision},{scale})"
