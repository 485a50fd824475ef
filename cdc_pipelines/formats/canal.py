"""Canal JSON as OMS and DTS write it: `data`/`old` row arrays, `sqlType`, `mysqlType`, `es`/`ts`.

One message may carry several rows; each becomes an event, paired with the `old` entry at the same
index. `old` holds only the changed columns, so the before image is `data` overlaid with `old`.
DTS instances created before 2022-03-20 swap `data` and `old` (option `legacy=true`). OMS writes
binary values as base64 (`binary=base64`, the default); open-source canal writes them as ISO-8859-1
text (`binary=latin1`). TIMESTAMP text without an offset is read in `timezone` (default UTC).

The encoders write one message per event (a multi-row message comes back as one message per row):
the canal fields as OMS writes them (every field, null where unknown) or as DTS does (only the fields
it has, plus `id`/`gtid`). Canal `old` holds the changed columns' before values. TIMESTAMP values
go out as OMS epoch `sec.fraction` text (OMS) or as date-time text in `timezone` (DTS).
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import zoneinfo
from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats import encoding as E
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


CANAL_FORMATS = ("oms-canal", "dts-canal")
# canal's DDL type names (DataWorks 2.0 uses the same vocabulary, so its DDL ops carry over)
DDL_TYPES = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX")
# raw ops that mark a full-load row in other formats (OMS Default ROW, Debezium r, DTS INIT)
FULL_LOAD_RAW_OPS = ("INIT", "ROW", "r")
# MySQL's BOOLEAN (not tinyint): the decoder then reads the column back as BOOLEAN, not INT
CANAL_MYSQL_TYPES = {**E.LOGICAL_TO_MYSQL, "BOOLEAN": "boolean"}
_INSTANT = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,9})?Z")
_OFFSET = re.compile(r"([+-])([0-9]{2}):([0-9]{2})")


def _zone(name: str) -> dt.tzinfo:
    match = _OFFSET.fullmatch(name)
    if not match:
        return zoneinfo.ZoneInfo(name)
    sign, hours, minutes = match.groups()
    delta = dt.timedelta(hours=int(hours), minutes=int(minutes))
    return dt.timezone(-delta if sign == "-" else delta)


def _local_text(value: str, zone: dt.tzinfo) -> str:
    """`2020-11-24T16:01:02.012345Z` -> `2020-11-24 16:01:02.012345` in `zone` (binlog canal's TIMESTAMP text)."""
    match = _INSTANT.fullmatch(value)
    if not match:
        return value
    day, clock, frac = match.groups()
    t = dt.datetime.fromisoformat(f"{day}T{clock}+00:00").astimezone(zone)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}{frac or ''}"


def _bytes_text(value: str, binary: str) -> str:
    """Canonical base64 BYTES as the `binary` option writes them (ISO-8859-1 text or hex)."""
    if binary == "base64":
        return value
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        raise E.Unsupported(f"BYTES value is not standard base64: {value[:40]!r}") from None
    return raw.decode("latin-1") if binary == "latin1" else raw.hex()


def _values(event: dict, image: dict | None, options: Mapping[str, str], oms: bool) -> dict | None:
    """An image as canal writes it: TIMESTAMP as OMS epoch text (OMS) or local date-time text in
    `timezone` (DTS, as binlog canal does), BYTES per `binary`, numbers where the source had them."""
    if image is None:
        return None
    types = event.get("column_types") or {}
    zone = _zone(options.get("timezone", "UTC"))
    binary = options.get("binary", "base64")

    def value(key: str, text: str | None) -> str | None:
        kind = types.get(key)
        if text is None or kind not in ("TIMESTAMP", "BYTES"):
            return text
        if kind == "BYTES":
            return _bytes_text(text, binary)
        return E.instant_to_epoch_text(text) if oms else _local_text(text, zone)

    return E.image_json(event, {k: value(k, v) for k, v in image.items()})


def _canal_type(event: dict, same: bool, dts: bool) -> str:
    op, raw = event["op"], event.get("raw_op")
    if same and raw and ((ROW_TYPES.get(raw) or CONTROL_TYPES.get(raw)) == op or op == "DDL"):
        return raw  # includes a type canal marked DDL only through isDdl
    if op == "INSERT":
        return "INIT" if dts and raw in FULL_LOAD_RAW_OPS else "INSERT"
    if op in ("UPDATE", "DELETE", "TRUNCATE"):
        return op
    if op == "DDL":
        # the DDL kind is not in the canonical row: keep a canal name the source gave, else a generic one
        return raw if raw in DDL_TYPES else ("DDL" if dts else "QUERY")
    why = " (an UPSERT is neither an INSERT nor an UPDATE)" if op == "UPSERT" else ""
    raise E.Unsupported(f"canal has no {op} message{why}")


def _types(event: dict, same: bool) -> tuple[dict | None, dict | None]:
    """(mysqlType, sqlType): as the canal source wrote them, else from the logical types."""
    if same:
        sql_types = (event.get("meta") or {}).get("sqlType")
        codes = None if sql_types is None else {k: E.number(v) for k, v in E.shared_json(sql_types).items()}
        return event.get("source_types"), codes
    types = {k: t for k, t in (event.get("column_types") or {}).items() if t in CANAL_MYSQL_TYPES}
    if not types:
        return None, None
    return {k: CANAL_MYSQL_TYPES[t] for k, t in types.items()}, {k: E.LOGICAL_TO_SQL_TYPE[t] for k, t in types.items()}


def _encode(dts: bool):
    def encode(event: dict, options: Mapping[str, str]) -> list:
        same = E.from_same_family(event, *CANAL_FORMATS)
        op = event["op"]
        canal_type = _canal_type(event, same, dts)
        E.require_table(event)
        meta = event.get("meta") or {}
        legacy = options.get("legacy", "false").lower() == "true"
        data = old = None
        if op in C.ROW_OPS:
            if op == "UPDATE" and event.get("before") is None:
                raise E.Unsupported("UPDATE without a before image: canal `old` cannot be built")
            current = event["before"] if op == "DELETE" else event["after"]
            data = [_values(event, current, options, not dts)]
            if op == "UPDATE":
                before = event["before"]
                changed = [k for k in E.changed_columns(event, *CANAL_FORMATS) if k in before]
                old = [_values(event, {k: before[k] for k in changed}, options, not dts)]
            if legacy:  # DTS instances created before 2022-03-20: the current row in `old`
                data, old = old, data
        mysql_types, sql_types = _types(event, same)
        if same:
            es, ts = meta.get("es"), meta.get("ts")
            is_ddl = meta.get("isDdl", str(op in ("DDL", "TRUNCATE")).lower()) == "true"
            sql = event.get("ddl") if op == "DDL" else meta.get("sql")
            extra = {name: meta.get(name) for name in ("id", "gtid", "serverId")}
        else:
            es, ts = (E.epoch_millis(event.get(k)) for k in ("event_time", "sync_time"))
            es, ts = (None if v is None else str(v) for v in (es, ts))
            is_ddl = op in ("DDL", "TRUNCATE")
            sql = event.get("ddl") or ""
            extra = {"id": event.get("seq"), "gtid": event.get("tx_id")} if dts else {}
        message = {
            "database": event.get("db"),
            "sqlType": sql_types,
            "data": data,
            "pkNames": event.get("pk_columns"),
            "old": old,
            "mysqlType": mysql_types,
            "type": canal_type,
            "table": event.get("table_name") or "",
            "es": E.number(es),
            "isDdl": is_ddl,
            "ts": E.number(ts),
            "sql": sql,
            "id": E.number(extra.get("id")),
            "gtid": extra.get("gtid"),
            "serverId": E.number(extra.get("serverId")),
        }
        if dts:  # DTS leaves out what it does not have (see its examples)
            message = {k: v for k, v in message.items() if v is not None}
        else:  # OMS writes every canal field, null where it has nothing; `id`/`gtid` only from DTS twins
            message = {k: v for k, v in message.items() if k not in ("id", "gtid", "serverId") or v is not None}
        return [E.dumps(message)]

    return encode


OPTIONS = {"legacy": "false", "binary": "base64", "timezone": "UTC"}
OMS_CANAL = Codec(
    "oms-canal",
    SCHEMA,
    decode_canal,
    options=OPTIONS,
    multi_row=True,
    encode=_encode(dts=False),
    description="Canal JSON (OMS)",
)
DTS_CANAL = Codec(
    "dts-canal",
    SCHEMA,
    decode_canal,
    options=OPTIONS,
    multi_row=True,
    encode=_encode(dts=True),
    description="Canal JSON (DTS)",
)
