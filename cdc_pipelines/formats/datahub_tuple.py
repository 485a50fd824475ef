"""DataHub TUPLE rows (seed 004): metadata columns plus the table's business columns.

A row comes as a JSON object per line or as a CSV line under a header line. `_operation_type_` is
I, U or D; an update is two `U` rows sharing `_sequence_id_`, the before row marked by
`_before_image_ = Y`, the after row by `_after_image_ = Y`, paired like any split update.
`_excute_time_` (sic) is epoch millis. TUPLE carries no table name unless `_source_table_` is
there, so the `db`/`table` options name it.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats.base import (
    IS_MESSAGE,
    PRE_REJECT,
    RAW_ENCODING,
    Codec,
    emit,
    first_reason,
    lookup,
    parse_json_lines,
    raw_line,
    unreadable_line,
)

META_COLUMNS = (
    "_sequence_id_",
    "_operation_type_",
    "_excute_time_",
    "_source_table_",
    "_before_image_",
    "_after_image_",
)
OPS = {"I": "INSERT", "U": "UPDATE", "D": "DELETE", "INSERT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE"}
_CSV_FIELD = r'(?:^|,)("(?:[^"]|"")*"|[^,]*)'


def parse_tuple_lines(lines: DataFrame, schema: T.DataType) -> DataFrame:
    """JSON lines as usual; in a `.csv` file, line 1 is the header and each other line one row."""
    is_csv = F.lower(F.regexp_replace("source_file", r"\.(gz|bz2|deflate|zst)$", "")).endswith(".csv")
    headers = lines.where(is_csv & (F.col("source_line") == 1)).select(
        "source_file", _csv_split(F.col("value")).alias("_xheader")
    )
    json_rows = parse_json_lines(lines.where(~is_csv), schema)
    csv_lines = lines.where(is_csv).join(F.broadcast(headers), "source_file", "left")
    fields = _csv_split(F.col("value"))
    header = F.col("_xheader")
    unreadable = unreadable_line(F.col("value"))
    raw, encoding = raw_line(F.col("value"))
    csv_rows = csv_lines.select(
        raw.alias("value"),
        "source_file",
        "source_line",
        F.when(F.size(fields) == F.size(header), F.map_from_arrays(header, fields)).alias("msg"),
        first_reason(
            (unreadable.isNotNull(), unreadable),
            (F.trim("value") == "", "empty line"),
            (
                F.size(fields) != F.size(header),
                F.format_string("CSV row has %d fields, its header %d", F.size(fields), F.size(header)),
            ),
        ).alias(PRE_REJECT),
        (F.col("source_line") != 1).alias(IS_MESSAGE),
        encoding.alias(RAW_ENCODING),
    )
    return json_rows.unionByName(csv_rows)


def _csv_split(line: Column) -> Column:
    """The fields of one RFC 4180 CSV line: quotes removed, `""` unescaped; an empty unquoted field is null."""
    raw = F.regexp_extract_all(line, F.lit(_CSV_FIELD), 1)
    return F.transform(
        raw,
        lambda f: (
            F.when(f.startswith('"'), F.regexp_replace(F.regexp_replace(f, '^"|"$', ""), '""', '"'))
            .when(f == "", F.lit(None))
            .otherwise(f)
        ),
    )


def decode_tuple(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    row = F.col("msg")
    meta = J.image_text(F.map_filter(row, lambda k, _v: k.isin(*META_COLUMNS)))
    business = F.map_filter(row, lambda k, _v: ~k.isin(*META_COLUMNS))
    raw_op = F.element_at(meta, "_operation_type_")
    op = lookup(OPS, F.upper(raw_op))
    has_before = F.upper(F.element_at(meta, "_before_image_")) == "Y"
    has_after = F.upper(F.element_at(meta, "_after_image_")) == "Y"
    is_half = (op == "UPDATE") & (has_before != has_after)
    sequence = F.element_at(meta, "_sequence_id_")
    source_table = F.element_at(meta, "_source_table_")
    event_time, unit = C.time_of(F.element_at(meta, "_excute_time_"))
    fields = {
        "op": op,
        "raw_op": raw_op,
        "db": F.lit(options.get("db") or None),
        "table_name": F.coalesce(source_table, F.lit(options.get("table") or None)),
        "event_time": event_time,
        "event_time_unit": unit,
        "seq": sequence,
        "before_raw": F.when(op == "DELETE", business).when((op == "UPDATE") & has_before, business),
        "after_raw": F.when(op == "INSERT", business).when((op == "UPDATE") & has_after, business),
        "meta": meta,
    }
    reason = first_reason(
        (raw_op.isNull(), "missing _operation_type_"),
        (op.isNull(), F.concat(F.lit("unknown _operation_type_ '"), raw_op, F.lit("'"))),
        ((op == "UPDATE") & ~is_half, "U row must have exactly one of _before_image_/_after_image_ = Y"),
        (is_half & sequence.isNull(), "U row without _sequence_id_ to pair it"),
    )
    key = F.when(is_half, F.concat_ws("\u0001", F.coalesce(source_table, F.lit("")), sequence))
    return emit(df, fields, reason, pair_key=key)


# ---------------------------------------------------------------- encoder
#
# One JSON object per row: the metadata columns, then the business columns with their canonical text
# (numbers where the source wrote numbers). An update is two `U` rows sharing `_sequence_id_`; an
# event without a sequence id gets a made-up one. TUPLE carries no DDL, heartbeat or transaction
# message (seed 004), and no database name: `_source_table_` is the table name.

ROW_FLAGS = {  # (_operation_type_, _before_image_, _after_image_) of each kind of row
    "INSERT": ("I", "N", "Y"),
    "DELETE": ("D", "Y", "N"),
    "UPDATE": ("U", "N", "Y"),
    "UPDATE_BEFORE": ("U", "Y", "N"),
}


def _flags(kind: str) -> dict:
    return dict(zip(("_operation_type_", "_before_image_", "_after_image_"), ROW_FLAGS[kind], strict=True))


def encode_tuple(event: dict, options: Mapping[str, str]) -> list:
    op = event["op"]
    if op not in ("INSERT", "UPDATE", "DELETE"):
        raise E.Unsupported(f"DataHub TUPLE carries I/U/D rows only, not {op}")
    meta = event.get("meta") or {}
    before, after = event.get("before"), event.get("after")
    clashes = sorted({k for image in (before, after) if image for k in image} & set(META_COLUMNS))
    if clashes:
        raise E.Unsupported(f"column(s) {', '.join(clashes)} clash with TUPLE metadata columns")
    if E.from_same_family(event, "datahub-tuple"):
        # the metadata columns as they came (those of the after row, for a paired update)
        base = {k: meta[k] for k in META_COLUMNS if k in meta}
        row_flags = {}
        before_flags = _flags("UPDATE_BEFORE") | {"_operation_type_": meta.get("cdc.before_raw_op", "U")}
    else:
        millis = E.epoch_millis(event.get("event_time"))
        base = {
            "_sequence_id_": event.get("seq") or E.synthetic_sequence(event),
            "_operation_type_": None,
            "_excute_time_": None if millis is None else str(millis),
            "_source_table_": event.get("table_name"),
        }
        row_flags = _flags(op)
        before_flags = _flags("UPDATE_BEFORE")

    def row(flags: dict, image: dict | None) -> str:
        return E.dumps(base | flags | (E.image_json(event, image) or {}))

    rows = [row(row_flags, before if op == "DELETE" else after)]
    if op == "UPDATE" and before is not None:
        rows.insert(0, row(before_flags, before))
    return rows


DATAHUB_TUPLE = Codec(
    "datahub-tuple",
    J.TEXT_MAP,
    decode_tuple,
    options={"db": "", "table": ""},
    update_has_before=False,
    split_update=True,
    parse=parse_tuple_lines,
    encode=encode_tuple,
    description="DataHub TUPLE rows (JSON lines or CSV with header)",
)
