"""DataHub TUPLE rows (seed 004): metadata columns plus the table's business columns.

A row comes as a JSON object per line or as a CSV line under a header line. `_operation_type_` is
I, U or D; an update is two `U` rows sharing `_sequence_id_`, the before row marked by
`_before_image_ = Y`, the after row by `_after_image_ = Y`, paired like any split update.
`_excute_time_` (sic) is epoch millis. TUPLE carries no table name unless `_source_table_` is
there, so the `db`/`table` options name it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import NOT_JSON_OBJECT, Codec, Option, RawEvent, Reject
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

META_COLUMNS = (
    "_sequence_id_",
    "_operation_type_",
    "_excute_time_",
    "_source_table_",
    "_before_image_",
    "_after_image_",
)
OPS = {"I": "INSERT", "U": "UPDATE", "D": "DELETE", "INSERT": "INSERT", "UPDATE": "UPDATE", "DELETE": "DELETE"}
# times repeat from message to message (second or millisecond precision): parse each text once
_time_of = functools.lru_cache(maxsize=4096)(C.time_of)
_META = frozenset(META_COLUMNS)
OPTIONS = (
    Option("db", "", "the database of rows without `_source_table_`"),
    Option("table", "", "the table of rows without `_source_table_`"),
)


def decode_tuple(message: bytes | dict, options: Mapping[str, str]) -> list[RawEvent]:
    """One TUPLE row: a JSON line's bytes, or a CSV row as a dict header -> field (`extracts.rows`)."""
    if isinstance(message, dict):
        row = dict(message)
    else:
        try:
            row = J.parse_object(message)
        except J.NotJsonObject:
            raise Reject(NOT_JSON_OBJECT) from None
    # the metadata columns as text (null values kept), in the row's order, taken out of the row: the
    # business columns as parsed are what is left (the row is this message's own)
    meta = {k: J.text(row.pop(k)) for k in [k for k in row if k in _META]}
    raw_op = meta.get("_operation_type_")
    if raw_op is None:
        raise Reject("missing _operation_type_")
    op = OPS.get(raw_op.upper())
    if op is None:
        raise Reject(f"unknown _operation_type_ '{raw_op}'")
    # each flag `Y` (any case) -> True, another text -> False, no value -> None (unknown)
    has_before, has_after = (
        None if v is None else v.upper() == "Y" for v in map(meta.get, ("_before_image_", "_after_image_"))
    )
    sequence, source_table = meta.get("_sequence_id_"), meta.get("_source_table_")
    pair_key = None
    if op == "UPDATE" and has_before is not None and has_after is not None:
        # a U row missing either flag is no half: it stands alone (as the SQL's null comparison had it)
        if has_before == has_after:
            raise Reject("U row must have exactly one of _before_image_/_after_image_ = Y")
        if sequence is None:
            raise Reject("U row without _sequence_id_ to pair it")
        pair_key = f"{source_table or ''}\u0001{sequence}"
    event_time, unit = _time_of(meta.get("_excute_time_"))  # an unreadable one: `finish_event` rejects it
    before = row if op == "DELETE" or (op == "UPDATE" and has_before) else None
    after = row if op == "INSERT" or (op == "UPDATE" and has_after) else None
    return [
        {
            "op": op,
            "raw_op": raw_op,
            "db": options.get("db") or None,
            "table_name": source_table if source_table is not None else options.get("table") or None,
            "event_time": event_time,
            "event_time_unit": unit,
            "seq": sequence,
            "before": before,
            "after": after,
            "meta": meta,
            "pair_key": pair_key,
        }
    ]


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
        before_flags = _flags("UPDATE_BEFORE") | {"_operation_type_": meta.get(meta_keys.BEFORE_RAW_OP, "U")}
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


def recognise_tuple(message: dict) -> bool:
    """A JSON-lines row with DataHub's system columns (a CSV file is told by its header)."""
    return "_operation_type_" in message or "_sequence_id_" in message


DATAHUB_TUPLE = Codec(
    "datahub-tuple",
    decode_tuple,
    encode_tuple,
    options=OPTIONS,
    update_has_before=False,
    split_update=True,
    messages="tuple",
    event_time_unit="ms",
    names_pk=False,
    description="DataHub TUPLE rows (JSON lines or CSV with header)",
    recognise=recognise_tuple,
)
