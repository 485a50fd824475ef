"""What every encoder shares: the event dict it gets, exact JSON emission, and what it cannot carry.

An encoder is a plain function `encode(event, options) -> list[str | bytes]` run inside
`mapInArrow` batches: the event is one canonical row as a dict (maps as dicts, times as aware UTC
datetimes). It returns the target's messages for that event (usually one; two for a split update)
or raises `Unsupported` for an event the target format cannot carry, which is counted as skipped.
Numbers are written with exactly their canonical digits through `orjson.Fragment`, never a float.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

import orjson

from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys

NUMERIC_TYPES = frozenset({"INT", "DECIMAL", "FLOAT", "DOUBLE"})
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class OlderSchemaMessage(bytes):
    """A binary message written with an older writer schema of its format (a DTS Avro record without
    `bornTimestamp`): its container file is chosen from this tag, without reading the record again."""


class Unsupported(Exception):  # noqa: N818 - a reason, not an error: the event is skipped by this target
    """The target format cannot carry this event (e.g. a DDL in DataHub TUPLE)."""


def dumps(obj) -> str:
    """Compact JSON text; strings escaped by orjson (quotes, backslashes, control chars, non-BMP)."""
    return orjson.dumps(obj).decode()


def number(text: str | None):
    """A JSON number with exactly these digits, or the text as a JSON string if it is no JSON number."""
    if text is None:
        return None
    return orjson.Fragment(text.encode()) if _JSON_NUMBER.fullmatch(text) else text


@lru_cache(maxsize=4096)
def shared_json(text: str):
    """`json.loads(text)`, shared between calls: meta JSON repeats per table, so it is parsed once.
    Callers only read the result."""
    return json.loads(text)


def json_numbers(event: dict) -> frozenset[str] | None:
    """Columns the source wrote as JSON numbers, when the source was JSON (else None)."""
    listed = (event.get("meta") or {}).get(meta_keys.JSON_NUMBERS)
    if listed:
        return frozenset(shared_json(listed))
    return frozenset() if event.get("source_format") != "dts-avro" else None


def image_json(event: dict, image: dict | None) -> dict | None:
    """An image as a JSON object: numbers where the source wrote numbers (by type where it was no JSON)."""
    if image is None:
        return None
    numbers = json_numbers(event)
    if numbers is None:
        types = event.get("column_types") or {}
        numbers = {key for key in image if types.get(key) in NUMERIC_TYPES}
    return {key: number(value) if key in numbers else value for key, value in image.items()}


def epoch_millis(ts: dt.datetime | None) -> int | None:
    """Exact epoch milliseconds of a timestamp (floor), None stays None."""
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=dt.UTC)
    delta = ts - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def epoch_seconds(ts: dt.datetime | None) -> int | None:
    millis = epoch_millis(ts)
    return None if millis is None else millis // 1000


def meta_of(event: dict, *prefixes: str) -> dict:
    """`meta` entries under the prefixes (prefix removed), or all non-`cdc.` entries without prefixes."""
    meta = event.get("meta") or {}
    if not prefixes:
        return {k: v for k, v in meta.items() if not k.startswith(meta_keys.PREFIX)}
    return {k[len(p) :]: v for k, v in meta.items() for p in prefixes if k.startswith(p)}


def same_double(text: str, value: float) -> bool:
    """Whether the double `value` (from `text`) stands for `text` exactly: the same decimal value as its
    shortest form or as its exact expansion, so no digit changes meaning on the way."""
    if not math.isfinite(value):
        return text.lstrip("+").lower() in ("nan", "inf", "-inf", "infinity", "-infinity")
    try:
        exact = Decimal(text)
    except InvalidOperation:
        return False
    return exact in (Decimal(repr(value)), Decimal(value))


def fraction_digits(fraction: str, digits: int, value: str, target: str) -> str:
    """The first `digits` fraction digits, zero-padded; Unsupported when a non-zero digit would be cut."""
    if fraction[digits:].strip("0"):
        raise Unsupported(f"{target} holds {digits} fraction digits; {value!r} has more")
    return fraction[:digits].ljust(digits, "0")


def require_table(event: dict) -> None:
    if event["op"] in ("INSERT", "UPDATE", "DELETE", "UPSERT") and not event.get("table_name"):
        raise Unsupported("row change without a table name")


LOGICAL_TO_MYSQL = {
    "BOOLEAN": "tinyint", "INT": "bigint", "DECIMAL": "decimal", "FLOAT": "float", "DOUBLE": "double",
    "STRING": "varchar", "BYTES": "blob", "DATE": "date", "TIME": "time", "DATETIME": "datetime",
    "TIMESTAMP": "timestamp", "ZONED_DATETIME": "varchar", "INTERVAL": "varchar", "JSON": "json",
}  # fmt: skip
# the type names OMS writes (DataWorks 2.0 `schema.column`; OMS Default's `__light_type` but BOOL), each read
# back as the same logical type
LOGICAL_TO_OMS = {
    "BOOLEAN": "BOOLEAN", "INT": "BIGINT", "DECIMAL": "DECIMAL", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE",
    "STRING": "VARCHAR", "BYTES": "BLOB", "DATE": "DATE", "TIME": "TIME", "DATETIME": "DATETIME",
    "TIMESTAMP": "TIMESTAMP", "ZONED_DATETIME": "ZONED_DATETIME", "INTERVAL": "INTERVAL_DAY_TO_SECOND", "JSON": "JSON",
}  # fmt: skip
LOGICAL_TO_SQL_TYPE = {
    "BOOLEAN": 16, "INT": -5, "DECIMAL": 3, "FLOAT": 6, "DOUBLE": 8, "STRING": 12, "BYTES": 2004, "DATE": 91,
    "TIME": 92, "DATETIME": 93, "TIMESTAMP": 93, "ZONED_DATETIME": 2014, "INTERVAL": 12, "JSON": 12,
}  # fmt: skip


def written_bytes(value: str, binary: str) -> str | None:
    """Canonical base64 BYTES as a `binary` option writes them: base64 as is, base16 as upper-case hex,
    latin1 as ISO-8859-1 text; None where the value is not standard base64."""
    if binary == "base64":
        return value
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    return raw.hex().upper() if binary == "base16" else raw.decode("latin-1")


def instant_to_epoch_text(value: str) -> str:
    """`2020-11-24T16:01:02.012345Z` -> `1606233662.012345` (OMS TIMESTAMP text; fraction kept)."""
    instant = C.instant_seconds(value)
    if instant is None:
        return value
    seconds, fraction = instant
    return f"{seconds}.{fraction}" if fraction else str(seconds)


def timestamps_as_epoch(image: dict | None, types: dict) -> dict | None:
    """An image with canonical TIMESTAMP values turned back into OMS epoch-seconds text."""
    if image is None:
        return None
    return {
        k: (instant_to_epoch_text(v) if v is not None and types.get(k) == "TIMESTAMP" else v) for k, v in image.items()
    }


def pk_values(event: dict) -> list[str | None] | None:
    image = event.get("after") or event.get("before") or {}
    pk = event.get("pk_columns")
    return None if not pk else [image.get(c) for c in pk]


def from_same_family(event: dict, *format_ids: str) -> bool:
    return event.get("source_format") in format_ids


def changed_columns(event: dict, *format_ids: str) -> list[str]:
    """Columns an UPDATE changed, in image order.

    From one of `format_ids` (formats that record it: canal `old`, SharePlex `data`) the decoder's
    meta `cdc.changed_columns`; otherwise the columns whose value differs between the before and
    after images, including a column only one of the images has.
    """
    listed = (event.get("meta") or {}).get(meta_keys.CHANGED_COLUMNS)
    if listed is not None and from_same_family(event, *format_ids):
        return json.loads(listed)
    before, after = event.get("before") or {}, event.get("after") or {}
    missing = object()
    changed = [k for k, v in before.items() if after.get(k, missing) != v]
    return changed + [k for k in after if k not in before]


def synthetic_sequence(event: dict) -> str:
    """A stable all-digit sequence id for an event that carries none (from its event id; fits a signed long).

    Formats that pair split updates by sequence id (DataWorks, DataHub TUPLE) or need a numeric id
    (DTS Avro `id`) use it when the canonical `seq` is null.
    """
    return str(int(event["event_id"][:15], 16))


_DATE = r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
_TIME = r"(?P<hour>[0-9]{2,3}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]{1,9}))?)?"
_TEMPORAL = {"DATE": re.compile(_DATE), "TIME": re.compile(_TIME), "DATETIME": re.compile(f"{_DATE}[ T]{_TIME}")}


def temporal_parts(value: str, logical: str) -> dict | None:
    """Parts of canonical DATE / TIME / DATETIME text, or None when the text is not that simple form.

    {"year", "month", "day"} for DATE; {"hour", "minute", "second", "fraction"} for TIME (hours may
    exceed 23); all of them for DATETIME (`YYYY-MM-DD[ T]HH:MM[:SS[.f]]`, no zone suffix). `fraction`
    is the fraction digits as written ("" when none); a date must exist in the calendar.
    """
    match = _TEMPORAL.get(logical, _TEMPORAL["DATETIME"]).fullmatch(value)
    if not match:
        return None
    parts = {k: (v or "") if k == "fraction" else int(v or 0) for k, v in match.groupdict().items()}
    if "year" in parts:
        try:
            dt.date(parts["year"], parts["month"], parts["day"])
        except ValueError:
            return None
    if logical == "DATETIME" and (parts["hour"] > 23 or parts["minute"] > 59 or parts["second"] > 59):
        return None
    return parts
