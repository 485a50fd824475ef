"""One message in, its canonical events or its reject out: the per-message pipeline, plain Python.

`decode_message` checks what no format can read (over-long lines, bytes that are not UTF-8, empty
lines), runs the codec, and finishes each raw event (`finish_event`): values normalised by logical
type, each op checked for the images and DDL text it needs, the JSON-number columns recorded. A
multi-row message is rejected whole when any of its rows is bad. `pair_halves` folds the halves of
split updates into one UPDATE; Spark brings the halves of a key together, tests sort them in memory.
The Spark runner (`runner`), the local decode (`pool`) and the tests call exactly these functions.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

import orjson

from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import BAD_EVENT_TIME, NOT_JSON_OBJECT, Codec, RawEvent, Reject, max_message_chars
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

EVENT_FIELDS = (
    "op", "raw_op", "db", "db_schema", "table_name", "event_time", "event_time_unit", "sync_time", "tx_id", "seq",
    "position", "pk_columns", "before", "after", "column_types", "source_types", "ddl", "meta",
)  # fmt: skip
# a finished event holds every field, in this order; a raw event may leave any out
EMPTY_EVENT = dict.fromkeys(EVENT_FIELDS) | {"row_index": 0, "pair_key": None}
_NO_COLUMNS: dict = {}


def raw_text(line: bytes) -> tuple[str, str]:
    """(raw, raw_encoding) of a line as rejects keep it: bytes that are not UTF-8 as base64."""
    try:
        return line.decode("utf-8"), "text"
    except UnicodeDecodeError:
        return base64.b64encode(line).decode(), "base64"


def unreadable(line: bytes, limit: int) -> str | None:
    """Why a line cannot be read as text at all (longer than `limit` characters, not UTF-8), or None."""
    if len(line) > limit:
        try:
            chars = len(line.decode("utf-8"))
        except UnicodeDecodeError:
            return "message is not valid UTF-8"
        if chars > limit:
            return f"message of {chars} characters is over the limit of {limit}"
    if not line.isascii():
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return "message is not valid UTF-8"
    return None


def _image_requirements(op: str, before, after, ddl, update_has_before: bool) -> str | None:
    if op in ("INSERT", "UPSERT", "UPDATE") and after is None:
        return f"{op} without an after image"
    if op == "DELETE" and before is None:
        return "DELETE without a before image"
    if op == "UPDATE" and update_has_before and before is None:
        return "UPDATE without a before image"
    if op == "DDL" and (ddl is None or not ddl.strip(" ")):
        return "DDL without DDL text"
    return None


# logical types whose canonical text is the value's text as written
_AS_WRITTEN = frozenset({"STRING", "UNKNOWN", "JSON", "ZONED_DATETIME", "INTERVAL"})
# logical types every JSON number token fits (the JSON number grammar is a part of theirs)
_NUMBER_TYPES = frozenset({"DECIMAL", "FLOAT", "DOUBLE"})


def _normalised(image: dict, types: dict, units: dict, bad: set, numbers: set, timezone: str, binary: str) -> dict:
    """`image` with every value as canonical text; `bad` gets the columns whose value does not fit its
    type, `numbers` those that were JSON numbers. What the parsed value's type already proves (a JSON
    integer is an INT, any JSON number a DECIMAL) is not checked again."""
    out = {}
    for key, raw in image.items():
        kind = type(raw)
        logical = types.get(key, "UNKNOWN")
        if kind is str:
            text = raw
        elif raw is None:
            out[key] = None
            continue
        elif kind is int:
            numbers.add(key)
            text = str(raw)
            if logical == "INT" or logical in _NUMBER_TYPES or logical in _AS_WRITTEN:
                out[key] = text
                continue
        elif kind is J.NumberText:
            numbers.add(key)
            text = raw
            if logical in _NUMBER_TYPES or logical in _AS_WRITTEN:
                out[key] = text
                continue
        else:
            text = J.text(raw)
        if logical in _AS_WRITTEN:
            out[key] = text
            continue
        value = C.normalise_value(text, logical, binary=binary, temporal_unit=units.get(key), timezone=timezone)
        if value is None:
            bad.add(key)
        out[key] = value
    return out


@lru_cache(maxsize=4096)
def _unknown_types(before: tuple[str, ...], after: tuple[str, ...]) -> dict[str, str]:
    """Every column UNKNOWN, for a format that gives no types: one shared dict per column set."""
    return dict.fromkeys([*before, *after], "UNKNOWN")


@lru_cache(maxsize=4096)
def _json_list(names: frozenset[str]) -> str:
    """The sorted names as a JSON array (the same few sets recur, one per table and op)."""
    return orjson.dumps(sorted(names)).decode()


def finish_event(raw: RawEvent, codec: Codec, options: Mapping[str, str]) -> dict:
    """The canonical event of a raw event (see `formats.base`); Reject when it cannot be one.

    The event's `column_types` name every image column (UNKNOWN where the format gives no type); a
    dict the codec shares between events is never changed here.
    """
    op = raw.get("op")
    if op is None:
        raise Reject("no op")
    if raw.get("event_time") is None and raw.get("event_time_unit") is not None:
        raise Reject(BAD_EVENT_TIME)
    before, after = raw.get("before"), raw.get("after")
    if not isinstance(before, dict | None) or not isinstance(after, dict | None):
        raise Reject(NOT_JSON_OBJECT)
    half = raw.get("pair_key") is not None
    why = _image_requirements(op, before, after, raw.get("ddl"), codec.update_has_before and not half)
    if why and not (half and op == "UPDATE" and before is not None):
        raise Reject(why)
    types = raw.get("column_types")
    if before or after:
        if not types:
            types = _unknown_types(tuple(before or ()), tuple(after or ()))
        elif not (types.keys() >= (before or _NO_COLUMNS).keys() and types.keys() >= (after or _NO_COLUMNS).keys()):
            types = dict.fromkeys([*(before or ()), *(after or ())], "UNKNOWN") | types
    event = EMPTY_EVENT | raw
    event["column_types"] = types
    meta = raw.get("meta")
    if before is not None or after is not None:
        bad: set[str] = set()
        numbers: set[str] = set()
        units = raw.get("temporal_units") or {}
        timezone, binary = options.get("timezone", "UTC"), options.get("binary", codec.binary)
        if before is not None:
            event["before"] = _normalised(before, types, units, bad, numbers, timezone, binary)
        if after is not None:
            event["after"] = _normalised(after, types, units, bad, numbers, timezone, binary)
        if bad:
            listed = ", ".join(f"{k}:{types[k]}" for k in sorted(bad))
            raise Reject(f"value does not fit its type in column(s) {listed}")
        if numbers:
            meta = {**(meta or {}), meta_keys.JSON_NUMBERS: _json_list(frozenset(numbers))}
    event["meta"] = meta or None
    event.pop("temporal_units", None)
    return event


def decode_message(
    codec: Codec, message: bytes | dict, options: Mapping[str, str], limit: int | None = None
) -> list[dict]:
    """The canonical events of one message (bytes of a line, or a CSV row as a dict); Reject if none.

    `limit` is the longest message parsed, in characters (default `max_message_chars()`). A message
    that gives no event at all is rejected too: a message never disappears.
    """
    if isinstance(message, bytes):
        why = unreadable(message, max_message_chars() if limit is None else limit)
        if why:
            raise Reject(why)
        if not message.strip(b" "):
            raise Reject("empty line")
    raw_events = codec.decode(message, options)
    if not raw_events:
        raise Reject("message holds no event")
    if len(raw_events) == 1:
        return [finish_event(raw_events[0], codec, options)]
    events, reasons = [], []
    for raw in raw_events:
        try:
            events.append(finish_event(raw, codec, options))
        except Reject as why:
            reasons.append(str(why))
    if reasons:  # a message is rejected whole, for the first of its rows' reasons in text order
        raise Reject(min(reasons))
    return events


def merge_halves(after: dict, before: dict) -> dict:
    """The after half with the before half's image and lineage folded in: one UPDATE of 2 messages."""
    meta = dict(after.get("meta") or {})
    before_meta = before.get("meta") or {}
    numbers = {
        *orjson.loads(meta.get(meta_keys.JSON_NUMBERS, "[]")),
        *orjson.loads(before_meta.get(meta_keys.JSON_NUMBERS, "[]")),
    }
    if numbers:
        meta[meta_keys.JSON_NUMBERS] = orjson.dumps(sorted(numbers)).decode()
    meta[meta_keys.BEFORE_SOURCE_FILE] = before["source_file"]
    meta[meta_keys.BEFORE_SOURCE_LINE] = str(before["source_line"])
    meta[meta_keys.BEFORE_RAW_OP] = before["raw_op"]
    return {**after, "before": before["before"], "meta": meta, "messages": 2}


def is_half(row: dict) -> bool:
    """A decoded row that is a split-update half still to pair (a rejected one keeps its pair key only to
    say why)."""
    return row.get("pair_key") is not None and row["reject_reason"] is None


@dataclass(frozen=True)
class RowCount:
    """A count of a decode as a sum over its rows: `value` (a column; None: 1 a row) of the rows whose flags
    are as given (None: either): `decoded` (no reject reason), `first` (the first row of its message,
    `row_index` 0), `kept` (not left out by the table filter)."""

    name: str
    value: str | None
    decoded: bool
    first: bool | None
    kept: bool | None

    def holds(self, decoded: bool, first: bool, kept: bool) -> bool:
        return all(want is None or want == got for want, got in ((self.decoded, decoded), (self.first, first),
                                                                 (self.kept, kept)))  # fmt: skip


# a decode's counts besides `read` (the messages counted before decoding): what the local decode sums
# (`decoded_counts`) and Spark aggregates (`runner._counts`), declared once
ROW_COUNTS = (
    RowCount("decoded", "messages", decoded=True, first=True, kept=True),
    RowCount("rejected", None, decoded=False, first=True, kept=None),
    RowCount("filtered", "messages", decoded=True, first=True, kept=False),
    RowCount("events", None, decoded=True, first=None, kept=True),
)


def decoded_counts(rows: Iterable[dict], read: int) -> dict[str, int]:
    """The `ROW_COUNTS` of decoded rows and the messages `read`: the rows tallied by their flags, then each
    count summed over the flags it takes."""
    tally: dict[tuple[bool, bool, bool], list[int]] = {}
    for r in rows:
        flags = (r["reject_reason"] is None, r["row_index"] == 0, not r.get("filtered"))
        found = tally.get(flags)
        if found is None:
            found = tally[flags] = [0, 0]
        found[0] += 1
        found[1] += r["messages"] or 0
    counts = {"read": read}
    for count in ROW_COUNTS:
        counts[count.name] = sum(n if count.value is None else messages
                                 for flags, (n, messages) in tally.items() if count.holds(*flags))  # fmt: skip
    return counts


def pair_halves_in_memory(halves: Iterable[dict], update_has_before: bool = False) -> Iterator[dict]:
    """`pair_halves` of halves in any order, sorted here: a local decode's, a pool bucket's (Spark sorts its
    shuffle's partitions itself)."""
    ordered = sorted(halves, key=lambda h: (h["pair_key"], h["source_file"], h["source_line"]))
    return pair_halves(ordered, update_has_before)


def pair_halves(halves: Iterable[dict], update_has_before: bool = False) -> Iterator[dict]:
    """Split-update halves sorted by (pair_key, source_file, source_line) -> paired rows.

    Within a key, the n-th before half pairs with the n-th after half in input order. A before half
    left alone is rejected (`reject_reason` set, never dropped); an after half left alone stays an
    UPDATE without a before image, or is rejected for it where the format always carries both.
    """

    def flush(befores: list[dict], afters: list[dict]) -> Iterator[dict]:
        for n in range(max(len(befores), len(afters))):
            before = befores[n] if n < len(befores) else None
            after = afters[n] if n < len(afters) else None
            if after is None:
                orphan = f"{before['raw_op']} without its matching after half (pair key {before['pair_key']})"
                yield {**before, "reject_reason": orphan}
            elif before is None:
                yield {**after, "reject_reason": "UPDATE without a before image"} if update_has_before else after
            else:
                yield merge_halves(after, before)

    key, befores, afters = None, [], []
    for half in halves:
        if half["pair_key"] != key:
            yield from flush(befores, afters)
            key, befores, afters = half["pair_key"], [], []
        (afters if half.get("after") is not None else befores).append(half)
    yield from flush(befores, afters)
