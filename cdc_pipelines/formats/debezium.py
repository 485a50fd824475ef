"""Debezium JSON as OMS writes it (seed 000): with or without `schema`, flattened, and after the SMT.

Values are converted only where a type is known: from the Kafka Connect schema when the message has
one (logical names such as `io.debezium.time.Date` decide temporal conversions; a bare int32/int64
stays an integer), or from the `column_types` option (`c22:DATE,c23:TIME`), which applies the
OMS encodings of seed 000 (DATE days, TIME micros, DATETIME millis). OMS writes BYTES as base16
(`binary=base16`, the default); standard Debezium writes base64 (`binary=base64`).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats.base import (
    Codec,
    OptionError,
    emit,
    first_reason,
    lookup,
    msg,
    prefixed,
    text_map,
    txt,
    typed_map,
    unknown_op_reason,
)

OPS = {
    "c": "INSERT",
    "r": "INSERT",
    "u": "UPDATE",
    "d": "DELETE",
    "t": "TRUNCATE",
    "m": "OTHER",
    "HEARTBEAT": "HEARTBEAT",
}
SMT_FIELDS = r"^__(deleted|op|table|db|schema|lsn|ts_ms|source_[A-Za-z_]+)$"
SMT_OPS = {"c": "INSERT", "r": "INSERT", "u": "UPDATE", "d": "DELETE"}

_COLUMN = T.StructType(
    [
        T.StructField("field", T.StringType()),
        T.StructField("type", T.StringType()),
        T.StructField("name", T.StringType()),
        T.StructField("parameters", J.TEXT_MAP),
    ]
)
_FIELD = T.StructType(
    [
        T.StructField("field", T.StringType()),
        T.StructField("type", T.StringType()),
        T.StructField("name", T.StringType()),
        T.StructField("fields", T.ArrayType(_COLUMN)),
    ]
)
_ENVELOPE = [
    T.StructField("op", T.StringType()),
    T.StructField("source", J.TEXT_MAP),
    T.StructField("before", J.TEXT_MAP),
    T.StructField("after", J.TEXT_MAP),
    T.StructField("ts_ms", T.StringType()),
    T.StructField("ts_us", T.StringType()),
    T.StructField("ts_ns", T.StringType()),
    T.StructField("transaction", J.TEXT_MAP),
]
SCHEMA = T.StructType(
    [
        T.StructField(
            "schema",
            T.StructType([T.StructField("name", T.StringType()), T.StructField("fields", T.ArrayType(_FIELD))]),
        ),
        T.StructField("payload", T.StructType(_ENVELOPE)),
        *_ENVELOPE,
    ]
)
SMT_SCHEMA = J.TEXT_MAP
OPTIONS = {"binary": "base16", "column_types": ""}


def parse_column_types(spec: str) -> dict[str, str]:
    """`c22:DATE,c23:TIME` -> {"c22": "DATE", "c23": "TIME"} (logical types of DESIGN.md)."""
    out: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, logical = item.rpartition(":")
        if not sep or logical.upper() not in C.LOGICAL_TYPES:
            raise OptionError(
                f"column_types entry {item!r} is not NAME:TYPE with TYPE one of {', '.join(C.LOGICAL_TYPES)}"
            )
        out[name] = logical.upper()
    return out


def _declared(options: Mapping[str, str]) -> tuple[Column, Column]:
    """(types, temporal units) given by the `column_types` option, as map columns (or nulls)."""
    declared = parse_column_types(options.get("column_types", ""))
    if not declared:
        return F.lit(None).cast(J.TEXT_MAP), F.lit(None).cast(J.TEXT_MAP)
    units = {k: C.OMS_DEBEZIUM_TEMPORAL_UNITS[v] for k, v in declared.items() if v in C.OMS_DEBEZIUM_TEMPORAL_UNITS}
    return C.lit_map(declared), (C.lit_map(units) if units else F.lit(None).cast(J.TEXT_MAP))


def _merge(*maps: Column) -> Column:
    """Later maps win; null maps are skipped; all null -> null."""
    parts = [F.coalesce(m, F.create_map().cast(J.TEXT_MAP)) for m in maps]
    merged = F.map_concat(*parts)
    return F.when(F.size(merged) > 0, merged)


def _schema_columns() -> Column:
    fields = msg("schema.fields")
    image = F.filter(fields, lambda f: f["field"].isin("after", "before"))
    return F.flatten(F.transform(image, lambda f: F.coalesce(f["fields"], F.array())))


def decode_debezium(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    def p(name: str) -> Column:
        return F.coalesce(msg("payload." + name), msg(name))

    raw_op = txt(p("op"))
    op = lookup(OPS, raw_op)
    is_row = op.isin(*C.ROW_OPS)
    source = J.image_text(p("source"))
    columns = _schema_columns()
    schema_types = typed_map(
        F.transform(
            columns,
            lambda c: F.struct(
                c["field"], F.coalesce(lookup(C.CONNECT_NAME_TO_LOGICAL, c["name"]), C.logical_type(c["type"]))
            ),
        )
    )
    schema_units = typed_map(
        F.transform(
            F.filter(columns, lambda c: lookup(C.CONNECT_TEMPORAL_UNITS, c["name"]).isNotNull()),
            lambda c: F.struct(c["field"], lookup(C.CONNECT_TEMPORAL_UNITS, c["name"])),
        )
    )
    source_types = typed_map(
        F.transform(columns, lambda c: F.struct(c["field"], F.concat_ws(" ", c["type"], c["name"])))
    )
    declared_types, declared_units = _declared(options)
    event_time, unit = C.epoch_time(F.element_at(source, "ts_ms"), "ms")
    sync_time, _ = C.epoch_time(txt(p("ts_ms")), "ms")
    fields = {
        "op": op,
        "raw_op": raw_op,
        "db": F.element_at(source, "db"),
        "db_schema": F.element_at(source, "schema"),
        "table_name": F.element_at(source, "table"),
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "tx_id": F.coalesce(F.element_at(J.image_text(p("transaction")), "id"), F.element_at(source, "txId")),
        "position": F.coalesce(
            F.concat(F.nullif(F.element_at(source, "file"), F.lit("")), F.lit(":"), F.element_at(source, "pos")),
            F.element_at(source, "pos"),
            F.element_at(source, "gtid"),
            F.element_at(source, "lsn"),
        ),
        "before_raw": F.when(is_row, p("before")),
        "after_raw": F.when(is_row, p("after")),
        "column_types": _merge(schema_types, declared_types),
        "temporal_units": _merge(schema_units, declared_units),
        "source_types": source_types,
        "meta": _merge(
            prefixed(p("source"), "source."),
            prefixed(p("transaction"), "transaction."),
            text_map(
                ("ts_ms", txt(p("ts_ms"))),
                ("ts_us", txt(p("ts_us"))),
                ("ts_ns", txt(p("ts_ns"))),
                ("cdc.schema", F.when(msg("schema").isNotNull(), F.lit("true"))),
            ),
        ),
    }
    reason = first_reason(
        (raw_op.isNull(), "missing op"),
        (op.isNull(), unknown_op_reason("op", raw_op)),
    )
    return emit(df, fields, reason)


def decode_debezium_smt(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    message = F.col("msg")
    row = F.map_filter(message, lambda k, _v: ~k.rlike(SMT_FIELDS))
    extra = F.map_filter(message, lambda k, _v: k.rlike(SMT_FIELDS))
    deleted = F.lower(txt(F.element_at(message, "__deleted")))
    smt_op = txt(F.element_at(message, "__op"))
    op = (
        F.when(deleted == "true", "DELETE")
        .when(smt_op.isNotNull(), lookup(SMT_OPS, smt_op))
        .when(deleted == "false", "UPSERT")
    )
    declared_types, declared_units = _declared(options)
    event_time, unit = C.epoch_time(txt(F.element_at(message, "__source_ts_ms")), "ms")
    fields = {
        "op": op,
        "raw_op": F.coalesce(smt_op, F.concat(F.lit("__deleted="), deleted)),
        "db": F.coalesce(txt(F.element_at(message, "__db")), F.lit(options.get("db") or None)),
        "table_name": F.coalesce(txt(F.element_at(message, "__table")), F.lit(options.get("table") or None)),
        "event_time": event_time,
        "event_time_unit": unit,
        "before_raw": F.when(op == "DELETE", row),
        "after_raw": F.when(op != "DELETE", row),
        "column_types": declared_types,
        "temporal_units": declared_units,
        "meta": J.image_text(extra),
    }
    reason = first_reason(
        (deleted.isNull() & smt_op.isNull(), "missing __deleted"),
        (op.isNull(), F.concat(F.lit("unknown __deleted/__op value '"), F.coalesce(smt_op, deleted), F.lit("'"))),
        (F.size(row) == 0, "no row columns"),
    )
    return emit(df, fields, reason)


_SMT_OPTIONS = {**OPTIONS, "db": "", "table": ""}
OMS_DEBEZIUM = Codec(
    "oms-debezium",
    SCHEMA,
    decode_debezium,
    options=OPTIONS,
    binary="base16",
    update_has_before=False,
    description="Debezium JSON (OMS)",
)
OMS_DEBEZIUM_FLATTEN = Codec(
    "oms-debezium-flatten",
    SCHEMA,
    decode_debezium,
    options=OPTIONS,
    binary="base16",
    update_has_before=False,
    description="DebeziumFlatten JSON (OMS)",
)
OMS_DEBEZIUM_SMT = Codec(
    "oms-debezium-smt",
    SMT_SCHEMA,
    decode_debezium_smt,
    options=_SMT_OPTIONS,
    binary="base16",
    update_has_before=False,
    description="DebeziumSmt JSON (OMS)",
)
