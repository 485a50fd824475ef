"""What each change of a day does to its table's keys, as data: the rules the fold (`fold`) reads.

A row change sets a key to its full after image or removes it (an UPDATE that changed its key removes the
old key and sets the new one); a TRUNCATE empties its table. An event's place in the day is one byte string
(`position`) that sorts as the day is applied, so either engine sorts the effects by table, key and place
(Spark compares binary values as Python compares `bytes`). Keys are matched by their text (`key_text`, the
tables' `_cdc_key`): the JSON Spark's `to_json` wrote for the lakes on disk. Pure Python over Arrow batches.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.model.canonical import ROW_OPS
from cdc_pipelines.model.meta_keys import KAFKA_KEY, ROW_INDEX
from cdc_pipelines.runtime.arrow_maps import shared_lists

TABLE = ("db", "db_schema", "table_name")
APPLIED_OPS = (*ROW_OPS, "TRUNCATE")
NO_PK = "no primary-key columns"

# an effect's kind: a key set to the after image or removed; the other rows of the effect stream are a
# table's TRUNCATE, a key live at the start of the day (`live`, added by the engine), and an event with
# no effect (`nokey`: it names no key columns, so its table is skipped; `none`: it has no image to key)
SET, DEL, TRUNCATE, LIVE, NOKEY, NONE = "set", "del", "truncate", "live", "nokey", "none"
# what an effect expects of its key just before it: an UPDATE or DELETE a live key, an INSERT none
PRESENT, ABSENT = "present", "absent"

_TEXT_MAP = pa.map_(pa.string(), pa.string())
EVENT_TIME = pa.timestamp("us", tz="UTC")
# one row per effect (or TRUNCATE, or event without effect), sorted by table, `_k`, `_pos`, `sub`
EFFECT_SCHEMA = pa.schema(
    [
        *(pa.field(c, pa.string()) for c in TABLE),
        pa.field("_t", pa.string()),  # the table's text (`table_text`): what the engines group and join by
        pa.field("_k", pa.string()),  # the key's text; null on a TRUNCATE or an event without effect
        pa.field("_pos", pa.binary()),  # the event's place in the day (`position`)
        pa.field("sub", pa.int32()),  # 1 for the new key of an UPDATE that moved its key, else 0
        pa.field("kind", pa.string()),
        pa.field("expect", pa.string()),
        pa.field("pk_columns", pa.list_(pa.string())),
        pa.field("op", pa.string()),
        pa.field("event_id", pa.string()),
        pa.field("event_time", EVENT_TIME),
        pa.field("dt", pa.string()),
        pa.field("after", _TEXT_MAP),
        pa.field("column_types", _TEXT_MAP),
    ]
)
EVENT_COLUMNS = (*TABLE, "op", "event_id", "event_time", "dt", "seq", "source_file", "source_line", "meta",
                 "source_topic", "pk_columns", "before", "after", "column_types")  # fmt: skip

_CONTROL = re.compile("[\x00-\x1f]")
_ESCAPED = re.compile('[\x00-\x1f"\\\\]')
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _jackson_string(text: str) -> str:
    out = []
    for ch in text:
        escaped = _SHORT_ESCAPES.get(ch)
        out.append(escaped if escaped else f"\\u{ord(ch):04X}" if ch < " " else ch)
    return '"' + "".join(out) + '"'


def key_text(values: Sequence[str | None]) -> str:
    """A key's values as one JSON array, as Spark's `to_json` (Jackson) writes it: each value as it is where
    nothing in it needs escaping (most keys), Python's JSON where the two agree (no control character),
    else Jackson's escapes (`\\u001F`, upper-case)."""
    if values and all(v is not None and not _ESCAPED.search(v) for v in values):
        return '["' + '","'.join(values) + '"]'
    if not any(v is not None and _CONTROL.search(v) for v in values):
        return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
    return "[" + ",".join("null" if v is None else _jackson_string(v) for v in values) + "]"


@functools.lru_cache(maxsize=65_536)
def _table_text(table: tuple) -> str:
    return key_text(table)


def table_text(table: Sequence[str | None]) -> str:
    """One text per table (nulls kept apart from the text `null`): the key of a table's figures."""
    return _table_text(tuple(table))


def table_label(table: Sequence[str | None]) -> str:
    """`db.schema.table` without its null parts: how `keys:` and the skipped tables name a table."""
    return ".".join(part for part in table if part is not None)


def _int64(value: int | None) -> bytes:
    return b"\x00" if value is None else b"\x01" + (value + (1 << 63)).to_bytes(8, "big")


def _text(value: str | None) -> bytes:
    """Text that sorts as its UTF-8 bytes and ends where it ends: a zero byte doubled, then two zeros."""
    return b"\x00" if value is None else b"\x01" + value.encode().replace(b"\x00", b"\x00\xff") + b"\x00\x00"


_DIGITS = re.compile(r"[0-9]+")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")


def position(
    micros: int | None, seq: str | None, source_file: str | None, source_line: int | None, row_index: int,
    event_id: str | None,
) -> bytes:  # fmt: skip
    """An event's place in the day's order, as bytes that sort in it: `event_time` (none first); then `seq`, as a
    number where it is all digits (`10` after `9`) before any other seq as text; then the lineage (`source_file`,
    `source_line`, the row of a multi-row message); then the unique `event_id`, so every run orders a day alike."""
    digits = seq is not None and _DIGITS.fullmatch(seq) is not None
    number = (seq.lstrip("0") or "0") if digits else None
    return b"".join((
        _int64(micros),
        b"\x00" if digits else b"\x01",
        _int64(len(number) if digits else None),
        _text(number),
        _text(seq),
        _text(source_file),
        _int64(source_line),
        _int64(row_index),
        _text(event_id),
    ))  # fmt: skip


def places(rows: pa.Table | pa.RecordBatch) -> list[bytes]:
    """Each row's place in the day's order (`position`)."""
    micros = rows.column("event_time").cast(pa.int64()).to_pylist()
    indexes = _lookup(rows.column("meta"), ROW_INDEX)
    cells = [rows.column(c).to_pylist() for c in ("seq", "source_file", "source_line")]
    return [position(at, seq, file, line, row_index(index), event_id) for at, seq, file, line, index, event_id
            in zip(micros, *cells, indexes, rows.column("event_id").to_pylist(), strict=True)]  # fmt: skip


def row_index(value: str | None) -> int:
    """The row's index inside a multi-row message (`meta['cdc.row_index']`; 0 where the format has one row
    per message)."""
    return int(value) if value is not None and _INTEGER.fullmatch(value) else 0


def kafka_key_columns(key: str | None) -> list[str] | None:
    """The field names of a Kafka key's JSON object (of its `payload` where the key carries its schema,
    as Debezium's JSON converter writes it), in order; None for a key that is no JSON object with fields."""
    try:
        value = json.loads(key) if key is not None else None
    except ValueError:
        return None
    if isinstance(value, dict):
        schema = value.get("schema")
        if isinstance(schema, dict) and schema.get("type") == "struct" and value.get("payload") is not None:
            value = value["payload"]
    return list(value) if isinstance(value, dict) and value else None


def key_columns(
    named: Sequence[str] | None, table: Sequence[str | None], topic: str | None, kafka_key: str | None,
    keys: Mapping[str, Sequence[str]] | None, kafka_keys: Collection[str] | bool,
) -> list[str] | None:  # fmt: skip
    """An event's key columns: those it names (`named`); else its table's in `keys` (`{"db.table": [col,
    ...]}`, the catalog's `keys:`); else, for the `kafka_keys` topics (True: every topic), those of the
    Kafka message key (`meta['cdc.kafka.key']`)."""
    if named:
        return list(named)
    configured = (keys or {}).get(table_label(table))
    if configured:
        return list(configured)
    if kafka_keys is True or (kafka_keys and topic in kafka_keys):
        return kafka_key_columns(kafka_key)
    return named


def key_effects(op: str, old: str | None, new: str | None) -> list[tuple[str, str, int, str | None]]:
    """A row change's effects in order as `(key, kind, sub, expect)`, from its before and after images' keys
    (`old`, `new`: None without the image): its key set or removed, and, for an UPDATE whose key changed,
    the new key set (`sub` 1); an effect without a key is left out."""
    moved = op == "UPDATE" and old is not None and new is not None and old != new
    first = (old if old is not None else new) if op in ("UPDATE", "DELETE") else new
    expect = PRESENT if op in ("UPDATE", "DELETE") else ABSENT if op == "INSERT" else None
    effects = [(first, DEL if op == "DELETE" or moved else SET, 0, expect)]
    if moved:
        effects.append((new, SET, 1, None))
    return [e for e in effects if e[0] is not None]


def _image_keys(image: pa.Array, columns: list[list[str] | None]) -> list[str | None]:
    """Each row's key text (None without an image or key columns), its values looked up by Arrow once per
    key column the day names (a day has few), not row by row in Python."""
    names = {name for row in columns if row is not None for name in row}
    values = {name: _lookup(image, name) for name in names}
    present = image.is_valid().to_pylist()
    return [key_text([values[name][i] for name in row]) if row is not None and present[i] else None
            for i, row in enumerate(columns)]  # fmt: skip


def _lookup(maps: pa.Array, key: str) -> list[str | None]:
    return pc.map_lookup(maps, pa.scalar(key, pa.string()), "first").to_pylist()


def day_effects(
    batches: Iterable[pa.RecordBatch], keys: Mapping[str, Sequence[str]] | None = None,
    kafka_keys: Collection[str] | bool = (), rewrite=None,
) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """The effect stream of a day's events (`EFFECT_SCHEMA`, unsorted): one row per effect of each row
    change, per TRUNCATE, and per row change without effect; other ops (DDL, heartbeats, transaction
    markers) change no rows and are left out. The batches hold at least `EVENT_COLUMNS`; `rewrite` (an
    `event_rewrite.EventRewrite`) brings them to the names the day's schema changes and routes give."""
    for batch in batches:
        if rewrite:
            batch = rewrite.rewrite(batch)
        ops = batch.column("op").to_pylist()
        wanted = [i for i, op in enumerate(ops) if op in APPLIED_OPS]
        if not wanted:
            continue
        rows = batch if len(wanted) == batch.num_rows else batch.take(pa.array(wanted, pa.int64()))
        n = rows.num_rows
        column = {c: rows.column(c).to_pylist() for c in (*TABLE, "op", "source_topic")}
        column["pk_columns"] = shared_lists(rows.column("pk_columns"))  # a table's events repeat one list
        kafka = _lookup(rows.column("meta"), KAFKA_KEY) if kafka_keys else [None] * n
        tables = list(zip(*(column[c] for c in TABLE), strict=True))
        names = [
            None if op == "TRUNCATE" else key_columns(named, table, topic, kafka_key, keys, kafka_keys)
            for op, named, table, topic, kafka_key in zip(column["op"], column["pk_columns"], tables,
                                                          column["source_topic"], kafka, strict=True)
        ]  # fmt: skip
        keyed = [c if op in ROW_OPS and c else None for op, c in zip(column["op"], names, strict=True)]
        old, new = _image_keys(rows.column("before"), keyed), _image_keys(rows.column("after"), keyed)
        take, out = [], {name: [] for name in ("_t", "_k", "_pos", "sub", "kind", "expect", "pk_columns")}
        for i, place in enumerate(places(rows)):
            op = column["op"][i]
            if op == "TRUNCATE":
                effects = [(None, TRUNCATE, 0, None)]
            elif op in ROW_OPS and not names[i]:  # a row change that names no key columns: its table is skipped
                effects = [(None, NOKEY, 0, None)]
            else:
                effects = key_effects(op, old[i], new[i]) or [(None, NONE, 0, None)]
            table = table_text(tables[i])
            for key, kind, sub, expect in effects:
                take.append(i)
                for name, value in zip(out, (table, key, place, sub, kind, expect, names[i]), strict=True):
                    out[name].append(value)
        picked = rows if len(take) == n else rows.take(pa.array(take, pa.int64()))  # one effect each, in order
        arrays = {name: pa.array(values, EFFECT_SCHEMA.field(name).type) for name, values in out.items()}
        columns = [arrays[f.name] if f.name in arrays else picked.column(f.name).cast(f.type) for f in EFFECT_SCHEMA]
        yield pa.RecordBatch.from_arrays(columns, schema=EFFECT_SCHEMA)
