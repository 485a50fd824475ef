"""SharePlex JSON (OMS seed 000; DTS seeds 001/003): `data`, `meta`, `key`, `sql`.

DTS adds `userid` and the long op names, including a split update (`UPDATE BEFORE` then `UPDATE
AFTER`, paired by table, `trans` and `rowid`). On update, `key` is the before image and `data`
only the changed columns, so the after image is `key` overlaid with `data`; the changed column
names are kept in `meta`. `meta.table` is `db.table`; `meta.time` is a UTC date-time text with
second precision. `DROP COLUMN` without `sql.ddl` keeps the op itself as its DDL text.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats.base import (
    Codec,
    emit,
    first_reason,
    lookup,
    msg,
    overlay,
    prefixed,
    text_map,
    unknown_op_reason,
)

OPS = {
    "ins": "INSERT",
    "upd": "UPDATE",
    "del": "DELETE",
    "ddl": "DDL",
    "INSERT": "INSERT",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "TRUNCATE": "TRUNCATE",
    "DROP COLUMN": "DDL",
    "UPDATE BEFORE": "UPDATE",
    "UPDATE AFTER": "UPDATE",
}
SPLIT_BEFORE, SPLIT_AFTER = "UPDATE BEFORE", "UPDATE AFTER"

SCHEMA = T.StructType(
    [
        T.StructField("data", J.TEXT_MAP),
        T.StructField("meta", J.TEXT_MAP),
        T.StructField("key", J.TEXT_MAP),
        T.StructField("sql", J.TEXT_MAP),
    ]
)


def decode_shareplex(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    meta = J.image_text(msg("meta"))
    raw_op = F.element_at(meta, "op")
    op = lookup(OPS, raw_op)
    data, key = msg("data"), msg("key")
    table = F.element_at(meta, "table")
    is_half = raw_op.isin(SPLIT_BEFORE, SPLIT_AFTER)
    pair = F.concat_ws("\u0001", table, F.element_at(meta, "trans"), F.element_at(meta, "rowid"))
    pair = F.when(F.element_at(meta, "trans").isNotNull() & F.element_at(meta, "rowid").isNotNull(), pair)
    has_db = F.instr(table, ".") > 0
    event_time, unit = C.time_of(F.element_at(meta, "time"))
    sync_time, _ = C.time_of(F.element_at(meta, "posttime"))
    fields = {
        "op": op,
        "raw_op": raw_op,
        "db": F.when(has_db, F.substring_index(table, ".", 1)),
        "table_name": F.when(has_db, F.expr("substring(msg.meta.table, instr(msg.meta.table, '.') + 1)")).otherwise(
            table
        ),
        "event_time": event_time,
        "event_time_unit": unit,
        "sync_time": sync_time,
        "tx_id": F.element_at(meta, "trans"),
        "seq": F.element_at(meta, "seq"),
        "position": F.nullif(F.element_at(meta, "scn"), F.lit("null")),
        "before_raw": F.when(op == "DELETE", data)
        .when(raw_op == SPLIT_BEFORE, F.coalesce(key, data))
        .when(raw_op == SPLIT_AFTER, F.lit(None))
        .when(op == "UPDATE", key),
        "after_raw": F.when(op == "INSERT", data)
        .when(raw_op == SPLIT_AFTER, overlay(key, data))
        .when(raw_op == SPLIT_BEFORE, F.lit(None))
        .when(op == "UPDATE", overlay(key, data)),
        "ddl": F.when(op == "DDL", F.coalesce(F.element_at(J.image_text(msg("sql")), "ddl"), raw_op)),
        "meta": F.map_concat(
            prefixed(msg("meta"), "meta."),
            text_map(
                ("cdc.changed_columns", F.when(op == "UPDATE", F.to_json(F.coalesce(F.map_keys(data), F.array()))))
            ),
        ),
    }
    reason = first_reason(
        (msg("meta").isNull(), "missing meta"),
        (raw_op.isNull(), "missing meta.op"),
        (op.isNull(), unknown_op_reason("meta.op", raw_op)),
        ((op == "UPDATE") & ~is_half & key.isNull(), F.concat(raw_op, F.lit(" without key (the before image)"))),
        (is_half & pair.isNull(), F.concat(raw_op, F.lit(" without meta.trans and meta.rowid to pair it"))),
    )
    return emit(df, fields, reason, pair_key=F.when(is_half, pair))


OMS_SHAREPLEX = Codec(
    "oms-shareplex",
    SCHEMA,
    decode_shareplex,
    split_update=True,
    description="SharePlex JSON (OMS)",
)
DTS_SHAREPLEX = Codec(
    "dts-shareplex",
    SCHEMA,
    decode_shareplex,
    split_update=True,
    description="SharePlex JSON (DTS)",
)
