"""Exact JSON reading on Spark's native JSON functions.

`from_json` re-writes every JSON float through a double (`0.10` -> `0.1`), so before parsing, every
number token of the message is turned into a string that starts with a marker character, by one
linear, string-aware JVM regex. Parsed with string leaves, a value keeps its exact digits, and the
marker still says it was a JSON number (so encoders can write a number back as a number). The marker
is U+FDD0, a Unicode noncharacter; a message that already contains it is rejected, never misread.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

NUMBER_MARK = "\ufdd0"
CORRUPT_FIELD = "_corrupt_record"
_NUMBER_TOKEN = r'\G((?:"(?:[^"\\]|\\.)*+"|[^"\-0-9])*+)(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)'
_MARKED_NUMBER = '"' + NUMBER_MARK + r'(-?[0-9][0-9.eE+\-]*)"'
_MAX_LEN = 2**31 - 1

TEXT_MAP = T.MapType(T.StringType(), T.StringType())


def with_corrupt_field(schema: T.StructType) -> T.StructType:
    return T.StructType([*schema.fields, T.StructField(CORRUPT_FIELD, T.StringType())])


def parse_exact(text: Column, schema: T.StructType) -> Column:
    """Parse JSON text with `schema` (string leaves), numbers kept as marked exact text.

    A line that is not JSON gives a struct whose only non-null field is `_corrupt_record`.
    """
    marked = F.regexp_replace(text, _NUMBER_TOKEN, '$1"' + NUMBER_MARK + '$2"')
    return F.from_json(
        marked, with_corrupt_field(schema), {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_FIELD}
    )


def parse_exact_map(text: Column, schema: T.MapType) -> Column:
    """`parse_exact` for messages that are one flat object (null where the text is not one)."""
    return F.from_json(
        F.regexp_replace(text, _NUMBER_TOKEN, '$1"' + NUMBER_MARK + '$2"'), schema, {"mode": "PERMISSIVE"}
    )


def has_reserved_mark(text: Column) -> Column:
    """True where a message already holds the marker (raw or as a \\u escape).

    Lower-casing a whole message is costly, so it is done only for messages with a `\\u` escape.
    """
    escaped = F.when(text.contains("\\u"), F.lower(text).contains("\\ufdd0")).otherwise(F.lit(False))
    return text.contains(NUMBER_MARK) | escaped


def ends_object(text: Column) -> Column:
    """True where the text ends with `}` before trailing whitespace (the parser stops after one value,
    so text after the object would otherwise go unseen). Most lines end with `}`: that is checked
    first, in constant time; trimming walks the whole line."""
    return text.endswith("}") | F.rtrim(text, F.lit(" \t\n\r\f\u000b")).endswith("}")


def is_number(value: Column) -> Column:
    """True where a parsed leaf was a JSON number."""
    return value.startswith(NUMBER_MARK)


def text(value: Column) -> Column:
    """The exact text of a parsed leaf: a number's digits, a string's characters, an object's JSON."""
    return (
        F.when(value.startswith(NUMBER_MARK), F.substring(value, 2, _MAX_LEN))
        .when(value.contains(NUMBER_MARK), F.regexp_replace(value, _MARKED_NUMBER, "$1"))
        .otherwise(value)
    )


def image_text(image: Column) -> Column:
    """`text` of every value of a parsed map."""
    return F.transform_values(image, lambda _k, v: text(v))


def number_columns(*images: Column) -> Column:
    """Sorted names of the keys whose value was a JSON number in any of the images."""
    keys = [F.coalesce(F.map_keys(F.map_filter(i, lambda _k, v: is_number(v))), F.array()) for i in images]
    return F.array_sort(F.array_distinct(F.flatten(F.array(*keys))))


def parse_nested(raw: Column, data_type: T.DataType) -> Column:
    """Parse a nested object kept as (marked) raw JSON text by the outer parse."""
    return F.from_json(raw, data_type, {"mode": "PERMISSIVE"})
