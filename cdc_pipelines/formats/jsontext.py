"""Exact JSON reading in plain Python: every number keeps its digits and stays known as a number.

`msgspec` hands each float token to `float_hook` as its exact text, so a `NumberText` (a `str`
subclass) keeps `1.10`, `1E+2` and `-0.0` as written and says it was a number; integers of any length
come back as `int`, exact through `str()`. Only `-0` loses its sign that way, so a message with a
`-0` integer token is read again by the standard library with every number as `NumberText`. Text
after the object is an error, so `{"a":1} {"b":2}` is no message.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import sys

import msgspec
import orjson

from cdc_pipelines.formats.base import NOT_JSON_OBJECT, Reject

# integers of any length are values here; Python refuses str() of one over 4300 digits by default
sys.set_int_max_str_digits(0)


class NumberText(str):
    """A JSON number's exact text."""

    __slots__ = ()


class NotJsonObject(Reject):
    """The text is not one JSON object (an array, a bare value, truncated, text after it, or nested
    deeper than the parser or the writer of nested values can go); `detail` says what the parser saw."""

    def __init__(self, detail: str) -> None:
        super().__init__(NOT_JSON_OBJECT)
        self.detail = detail


_DECODER = msgspec.json.Decoder(float_hook=NumberText)
_NEGATIVE_ZERO = re.compile(rb"-0(?![0-9.eE])")


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_object(message: bytes | str) -> dict:
    """The JSON object of one message, numbers exact; NotJsonObject when it is not one object."""
    data = message.encode() if isinstance(message, str) else message
    try:
        parsed = _DECODER.decode(data)
        if b"-0" in data and _NEGATIVE_ZERO.search(data):
            parsed = json.loads(data, parse_float=NumberText, parse_int=NumberText, parse_constant=_no_constant)
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        raise NotJsonObject(str(exc)) from None
    if not isinstance(parsed, dict):
        raise NotJsonObject("not an object")
    return parsed


def struct_parser(struct: type[msgspec.Struct]):
    """A parser of messages into `struct` (a format's fixed envelope: faster than a dict, and msgspec
    checks each field's JSON shape); NotJsonObject where the text or a field's shape does not fit.
    Fields typed `msgspec.Raw` keep their JSON text. A message with a `-0` token is read exactly by
    `parse_object` first, and its parts written back with their digits."""
    decoder = msgspec.json.Decoder(struct, float_hook=NumberText)
    raw_fields = {f.name for f in msgspec.structs.fields(struct) if f.type is msgspec.Raw}

    def parse(data: bytes) -> msgspec.Struct:
        try:
            if b"-0" in data and _NEGATIVE_ZERO.search(data):
                parsed = parse_object(data)
                for name in raw_fields & parsed.keys():
                    parsed[name] = msgspec.Raw(dumps_exact(parsed[name]).encode())
                return msgspec.convert(parsed, struct)
            return decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise NotJsonObject(str(exc)) from None

    return parse


def is_number(value: object) -> bool:
    """True where a parsed value was a JSON number."""
    return isinstance(value, NumberText | int) and not isinstance(value, bool)


def _fragment(value: object) -> object:
    if isinstance(value, NumberText):
        return orjson.Fragment(value.encode())
    if isinstance(value, dict):
        return {k: _fragment(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fragment(v) for v in value]
    return value


def dumps_exact(value: object) -> str:
    """Compact JSON text of a parsed value, numbers with their exact digits.

    orjson writes at most 255 levels: a value nested deeper is no object this project can keep.
    """
    try:
        return orjson.dumps(_fragment(value)).decode()
    except (orjson.JSONEncodeError, RecursionError):
        raise NotJsonObject("nested deeper than 255 levels") from None


def text(value: object) -> str | None:
    """The exact text of a parsed value: a number's digits, a string's characters, `true`/`false`,
    an object's or array's compact JSON; None for null."""
    kind = type(value)
    if kind is str or kind is NumberText or value is None:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    return dumps_exact(value)


def texts(values: dict) -> dict:
    """`values` (a parsed object, the message's own: changed in place) with each value as its `text`, nulls
    kept: a sub-object kept whole as meta (OMS allMetaData, SharePlex `meta`, Debezium `source`)."""
    for key, value in values.items():
        if value is not None and type(value) is not str:
            values[key] = str(value) if type(value) is int else text(value)
    return values


def column_pairs(value: object) -> tuple[tuple[str, str | None], ...] | None:
    """The (name, type) pairs of a message's column list (DataWorks' `schema.column` and `dataColumn`); an
    entry without a name cannot key a column, and names and types are strings but for odd messages: their
    text then. Reject where the list or an entry is not what the formats write."""
    if value is None:
        return None
    if type(value) is not list or any(c is not None and type(c) is not dict for c in value):
        raise Reject(NOT_JSON_OBJECT)
    named = ((text(c.get("name")), c) for c in value if c is not None)
    return tuple((name, text(c.get("type"))) for name, c in named if name is not None)


def value_b64(line: bytes) -> bytes:
    """The binary Kafka value a JSON line carries as `value_b64` (a kcat `-J` dump, Spark's Kafka read of a
    binary format); Reject when the line holds none."""
    try:
        envelope = parse_object(line)
    except NotJsonObject:
        raise Reject(NOT_JSON_OBJECT) from None
    b64 = text(envelope.get("value_b64"))
    if b64 is None:
        raise Reject("no value_b64 field")
    try:
        return base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise Reject(f"value_b64 is not base64: {exc}") from None
