"""What the plain JSON envelope codecs share (Maxwell, OGG, AWS DMS): meta tables, kept fields, local times.

Each of these codecs declares its meta fields once, as a table `{field: kind}`: the JSON field (also
its `meta` key) and how the encoder writes it back (`number`: JSON number with the same digits,
`text`: a JSON string, `bool`: true/false, `json`: the value's exact JSON). A
field the codec does not know is not lost: every such top-level field is kept, exactly, as one JSON
object in meta `cdc.extra`, and written back by an encoder of the same format.

Times without a zone (OGG `op_ts`, `current_ts`; SharePlex `time`, `posttime` too) are wall-clock
text read in the `timezone` option (default UTC); an encoder writes them back in the same zone.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

import orjson

from cdc_pipelines.formats import encoding as E
from cdc_pipelines.formats import jsontext as J
from cdc_pipelines.formats.base import NOT_JSON_OBJECT, Reject
from cdc_pipelines.model import canonical as C
from cdc_pipelines.model import meta_keys


def object_field(message: Mapping, name: str) -> dict | None:
    """A sub-object of the message (None when absent or null); Reject when it is something else (an
    image that is no object is no valid JSON object, as for every format)."""
    value = message.get(name)
    if value is None or isinstance(value, dict):
        return value
    raise Reject(NOT_JSON_OBJECT)


def text_list(message: Mapping, name: str) -> list[str | None] | None:
    """A JSON array of names as text (None when absent or null); Reject when it is no array."""
    value = message.get(name)
    if value is None:
        return None
    if not isinstance(value, list):
        raise Reject(f"`{name}` is not a JSON array")
    return [J.text(v) for v in value]


def read_meta(source: Mapping, fields: Iterable[str]) -> dict[str, str]:
    """The meta entries of the declared fields the message has (null fields are left out)."""
    return {f: J.text(source[f]) for f in fields if source.get(f) is not None}


def _value(text: str, kind: str):
    if kind == "number":
        return E.number(text)
    if kind == "bool":
        return text == "true" if text in ("true", "false") else text
    if kind == "json":
        return orjson.Fragment(text.encode())
    return text


def write_meta(meta: Mapping[str, str], fields: Mapping[str, str]) -> dict:
    """The message fields of the declared meta entries, written as their kinds say."""
    return {f: _value(meta[f], kind) for f, kind in fields.items() if meta.get(f) is not None}


def keep_extra(message: Mapping, known: Iterable[str], meta: dict) -> None:
    """Put every top-level field not in `known` into meta `cdc.extra` (one JSON object, exact)."""
    known = set(known)
    extra = {k: v for k, v in message.items() if k not in known}
    if extra:
        meta[meta_keys.EXTRA] = J.dumps_exact(extra)


def extra_fields(meta: Mapping[str, str]) -> dict:
    """The kept fields of `cdc.extra`, each as its exact JSON."""
    text = meta.get(meta_keys.EXTRA)
    if not text:
        return {}
    return {k: orjson.Fragment(J.dumps_exact(v).encode()) for k, v in J.parse_object(text).items()}


def split_table(name: str | None) -> tuple[str | None, str | None]:
    """(db, table) of `SCHEMA.TABLE` (OGG `table`, SharePlex `meta.table`): the table is the part after the
    last dot (`CATALOG.SCHEMA.TABLE` and a db that has dots, such as OceanBase's `tenant.database`, keep the
    rest as the db)."""
    if name is None:
        return None, None
    db, dot, table = name.rpartition(".")
    return (db, table) if dot else (None, name)


def local_time_of(text: str | None, timezone: str) -> tuple[int | None, str | None]:
    """(epoch micros, unit) of a date-time text; without a zone or offset it is read in `timezone`.

    Epoch numbers and ISO instants with `Z` read as `canonical.time_of` does, and so does any text in
    UTC (which `time_of` assumes; it also reads years before 1000, whose instant text has no 4-digit
    year). The unit is set whenever there is text, so an unreadable time is rejected, not dropped.
    """
    if text is None:
        return None, None
    if timezone != "UTC" and not text.endswith("Z"):
        text = C.local_to_instant_text(text, timezone) or text  # always ends in Z: never empty
    return C.time_of(text)


def local_text(moment: dt.datetime | None, timezone: str, sep: str = " ") -> str | None:
    """`YYYY-MM-DD HH:MM:SS.ffffff` of an instant, as a wall clock in `timezone` (`sep` between); the year in
    four digits, which `%Y` leaves out before 1000."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    local = moment.astimezone(C.zone(timezone))
    return f"{local.year:04d}-{local:%m-%d}{sep}{local:%H:%M:%S}.{local.microsecond:06d}"


def instant_text(moment: dt.datetime | None) -> str | None:
    """`YYYY-MM-DDTHH:MM:SS.ffffffZ` of an instant (UTC)."""
    text = local_text(moment, "UTC", "T")
    return None if text is None else text + "Z"
