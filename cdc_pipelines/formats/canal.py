"""Canal JSON as OMS and DTS write it: `data`/`old` row arrays, `sqlType`, `mysqlType`, `es`/`ts`.

One message may carry several rows; each becomes an event, paired with the `old` entry at the same
index. `old` holds only the changed columns, so the before image is `data` overlaid with `old`.
DTS instances created before 2022-03-20 swap `data` and `old` (option `legacy=true`). OMS writes
binary values as base64 (`binary=base64`, the default); open-source canal writes them as ISO-8859-1
text (`binary=latin1`). TIMESTAMP text without an offset is read in `timezone` (default UTC).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats.base import (
    PRE_REJECT,
    Codec,
    emit,
    first_reason,
    lookup,
    msg,
    overlay,
    text_map,
    txt,
    unknown_op_reason,
)

ROW_TYPES = {"INSERT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE", "INIT": "INSERT"}
CONTROL_TYPES = {
    "TRUNCATE": "TRUNCATE",
    **dict.fromkeys(["CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX", "DDL", "DROP"], "DDL"),
}
META_FIELDS = ("id", "gtid", "isDdl", "serverId")
# MySQL's REAL is a DOUBLE (unless REAL_AS_FLOAT), unlike REAL elsewhere
MYSQL_TYPE_OVERRIDES = {"real": "DOUBLE"}

SCHEMA = T.StructType(
    [
        T.StructField("database", T.StringType()),
        T.StructField("table", T.StringType()),
        T.StructField("type", T.StringType()),
        T.StructField("isDdl", T.StringType()),
        T.StructField("es", T.StringType()),
        T.StructField("ts", T.StringType()),
        T.StructField("sql", T.StringType()),
        T.StructField("pkNames", T.ArrayType(T.StringType())),
        T.StructField("sqlType", J.TEXT_MAP),
        T.StructField("mysqlType", J.TEXT_MAP),
        T.StructField("data", T.ArrayType(J.TEXT_MAP)),
        T.StructField("old", T.ArrayType(J.TEXT_MAP)),
        T.StructField("id", T.StringType()),
        T.StructField("gtid", T.StringType()),
        T.StructField("serverId", T.StringType()),
    ]
)


def _op(raw_type, is_ddl):
    control = lookup(CONTROL_TYPES, raw_type)
    row = lookup(ROW_TYPES, raw_type)
    return F.when(control.isNotNull(), control).when(is_ddl == "true", "DDL").otherwise(row)


def decode_canal(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    legacy = options.get("legacy", "false").lower() == "true"
    raw_type = txt(msg("type"))
    is_ddl = F.lower(txt(msg("isDdl")))
    op = _op(raw_type, is_ddl)
    is_row = op.isin(*C.ROW_OPS)
    # legacy DTS writes the current row in `old` and the previous values in `data`
    current, previous = (msg("old"), msg("data")) if legacy else (msg("data"), msg("old"))
    exploded = df.select(
        "*",
        F.posexplode_outer(F.when(F.col(PRE_REJECT).isNull() & is_row, current)).alias("_xpos", "_xrow"),
    )
    row, pos = F.col("_xrow"), F.col("_xpos")
    old_row = F.when(pos < F.size(previous), F.element_at(previous, pos + 1))
    before = F.when(op == "DELETE", row).when(op == "UPDATE", overlay(row, old_row))
    after = F.when(op.isin("INSERT", "UPDATE"), row)
    changed = F.when(op == "UPDATE", F.to_json(F.coalesce(F.map_keys(old_row), F.array())))
    mysql_types = J.image_text(msg("mysqlType"))
    sql_types = J.image_text(msg("sqlType"))
    by_code = F.transform_values(
        sql_types, lambda _k, v: F.coalesce(lookup(C.SQL_TYPE_CODE_TO_LOGICAL, v), F.lit("UNKNOWN"))
    )
    by_name = F.transform_values(mysql_types, lambda _k, v: C.logical_type(v, MYSQL_TYPE_OVERRIDES))
    # the type name decides; where the name is unknown the java.sql.Types code still tells
    known_names = F.map_filter(by_name, lambda _k, v: v != "UNKNOWN")
    column_types = (
        F.when(mysql_types.isNull(), by_code)
        .when(sql_types.isNull(), by_name)
        .otherwise(F.map_concat(by_name, by_code, known_names))
    )
    es_time, es_unit = C.time_of(txt(msg("es")))
    ts_time, _ = C.time_of(txt(msg("ts")))
    sql = txt(msg("sql"))
    meta = F.map_concat(
        text_map(
            *[(name, txt(msg(name))) for name in META_FIELDS if name in SCHEMA.fieldNames()],
            ("sql", F.when(op != "DDL", sql)),
            ("sqlType", F.to_json(sql_types)),
            ("cdc.changed_columns", changed),
            ("cdc.row_count", F.when(is_row, F.size(current).cast("string"))),
            ("cdc.row_index", F.when(is_row, pos.cast("string"))),
            ("es", txt(msg("es"))),
            ("ts", txt(msg("ts"))),
        ),
    )
    fields = {
        "op": op,
        "raw_op": raw_type,
        "db": txt(msg("database")),
        "table_name": F.nullif(txt(msg("table")), F.lit("")),
        "event_time": es_time,
        "event_time_unit": es_unit,
        "sync_time": ts_time,
        "tx_id": txt(msg("gtid")),
        "seq": txt(msg("id")),
        "position": txt(msg("gtid")),
        "pk_columns": msg("pkNames"),
        "before_raw": before,
        "after_raw": after,
        "column_types": column_types,
        "source_types": mysql_types,
        "ddl": F.when(op == "DDL", sql),
        "meta": meta,
    }
    reason = first_reason(
        (raw_type.isNull() & (is_ddl != "true"), "missing type"),
        (op.isNull(), unknown_op_reason("type", raw_type)),
        (is_row & row.isNull(), F.concat(F.lit("canal "), raw_type, F.lit(" message without rows"))),
    )
    return emit(exploded, fields, reason, row_index=F.coalesce(pos, F.lit(0)))


OPTIONS = {"legacy": "false", "binary": "base64", "timezone": "UTC"}
OMS_CANAL = Codec("oms-canal", SCHEMA, decode_canal, options=OPTIONS, multi_row=True, description="Canal JSON (OMS)")
DTS_CANAL = Codec("dts-canal", SCHEMA, decode_canal, options=OPTIONS, multi_row=True, description="Canal JSON (DTS)")
