"""What every codec shares: the decode contract and the step that finishes a decoded row.

A codec's `decode` takes the parsed messages (column `msg`, plus lineage columns it passes through)
and returns one row per event with *raw* images (`before_raw`, `after_raw`: exact text, not yet
normalised) and its own `reject_reason`. `finish` then does what is the same for every format:
normalise values by logical type, reject values that do not fit their type, check that each op has
the images and DDL text it needs, and record which values were JSON numbers.
"""

from __future__ import annotations

import os
import re
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from cdc_pipelines import canonical as C
from cdc_pipelines import jsontext as J
from cdc_pipelines.formats.encoding import Unsupported

PRE_REJECT = "pre_reject"
ROW_INDEX = "row_index"
PAIR_KEY = "pair_key"
MESSAGES = "messages"
IS_MESSAGE = "is_message"
RAW_ENCODING = "raw_encoding"
DECODED_FIELDS = (
    "op",
    "raw_op",
    "db",
    "db_schema",
    "table_name",
    "event_time",
    "event_time_unit",
    "sync_time",
    "tx_id",
    "seq",
    "position",
    "pk_columns",
    "before_raw",
    "after_raw",
    "column_types",
    "source_types",
    "ddl",
    "meta",
    "temporal_units",
)
_FIELD_TYPES = {f.name: f.dataType for f in C.CANONICAL_SCHEMA.fields} | {
    "before_raw": J.TEXT_MAP,
    "after_raw": J.TEXT_MAP,
    "temporal_units": J.TEXT_MAP,
}


OPTION_CHOICES = {
    "legacy": ("false", "true"),
    "binary": C.BINARY_ENCODINGS,
    "schema": ("auto", "true", "false"),
    "merged": ("auto", "true", "false"),
}


class OptionError(ValueError):
    """An option a codec does not know, or a value it cannot take."""


def _check_timezone(name: str) -> None:
    if re.fullmatch(r"[+-][0-9]{2}:[0-9]{2}", name):
        return
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise OptionError(f"timezone {name!r} is neither an IANA zone nor an offset like +08:00") from None


@dataclass(frozen=True)
class Codec:
    """A format id bound to its message schema and decode function."""

    format_id: str
    schema: T.DataType
    decode: Callable[[DataFrame, Mapping[str, str]], DataFrame]
    options: Mapping[str, str] = field(default_factory=dict)
    binary: str = "base64"
    update_has_before: bool = True
    multi_row: bool = False
    split_update: bool = False
    parse: Callable[[DataFrame, T.DataType], DataFrame] | None = None
    read: Callable[[SparkSession, list[str]], DataFrame] | None = None
    marked_json: bool = True
    encode: Callable[[dict, Mapping[str, str]], list] | None = None
    binary_messages: bool = False
    description: str = ""

    def encode_event(self, event: dict, options: Mapping[str, str]) -> list:
        """The messages of one canonical event; Unsupported for what this format cannot carry.

        An UPDATE without a before image is Unsupported wherever this format's decoder requires one,
        so a target never writes what its own decoder would reject.
        """
        if self.update_has_before and event["op"] == "UPDATE" and event.get("before") is None:
            raise Unsupported(f"UPDATE without a before image: {self.format_id} carries both images")
        return self.encode(event, options)

    def resolve_options(self, given: Mapping[str, str]) -> dict[str, str]:
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise OptionError(f"format {self.format_id} has no option {', '.join(unknown)} (options: {known})")
        resolved = {**self.options, **given}
        for key, allowed in OPTION_CHOICES.items():
            if key in resolved and resolved[key] not in allowed:
                raise OptionError(
                    f"option {key}={resolved[key]!r} of {self.format_id} must be one of {', '.join(allowed)}"
                )
        if "timezone" in resolved:
            _check_timezone(resolved["timezone"])
        return resolved


def max_message_chars() -> int:
    """The largest message decoded, in characters (env CDC_MAX_MESSAGE_CHARS, default 16 Mi)."""
    return int(os.environ.get("CDC_MAX_MESSAGE_CHARS", 16 * 1024 * 1024))


def unreadable_line(value: Column) -> Column:
    """Why a line cannot be read as text at all (too long to parse safely, not UTF-8), or null."""
    limit, length = max_message_chars(), F.length(value)
    return first_reason(
        (
            # bytes are at least as many as characters, and are known without walking the line
            (F.octet_length(value) > limit) & (length > limit),
            F.format_string(f"message of %d characters is over the limit of {limit}", length),
        ),
        (~F.is_valid_utf8(value), "message is not valid UTF-8"),
    )


def raw_line(value: Column) -> tuple[Column, Column]:
    """(raw, raw_encoding) of a line as rejects keep it: bytes that are not UTF-8 as base64."""
    valid = F.is_valid_utf8(value)
    return F.when(valid, value).otherwise(F.base64(value.cast("binary"))), F.when(valid, "text").otherwise("base64")


def parse_json_lines(lines: DataFrame, schema: T.DataType) -> DataFrame:
    """Lines -> `msg` (the parsed message) and `pre_reject` (why a line is no message of any format).

    Every line is a message (`is_message`); formats with header lines parse differently. A line
    longer than `max_message_chars()`, or not UTF-8, is rejected without being parsed, to protect
    memory and because its text would be a guess. Spark's JSON parser stops after the first value, so
    a line that does not end with the object's `}` is rejected here.
    """
    value = F.col("value")
    unreadable = unreadable_line(value)
    parse_input = F.when(unreadable.isNull(), value)
    if isinstance(schema, T.StructType):
        parsed = J.parse_exact(parse_input, schema)
        corrupt = parsed[J.CORRUPT_FIELD].isNotNull()
    else:
        parsed = J.parse_exact_map(parse_input, schema)
        corrupt = F.lit(False)
    staged = lines.select("value", "source_file", "source_line", parsed.alias("msg"))
    reason = F.coalesce(
        unreadable,
        first_reason(
            (F.trim(value) == "", "empty line"),
            (J.has_reserved_mark(value), "message contains the reserved character U+FDD0"),
            (F.col("msg").isNull() | corrupt | ~J.ends_object(value), "not a valid JSON object"),
        ),
    )
    raw, encoding = raw_line(value)
    return (
        staged.withColumn(PRE_REJECT, reason)
        .withColumn(IS_MESSAGE, F.lit(True))
        .withColumn(RAW_ENCODING, encoding)
        .withColumn("value", raw)
    )


def msg(path: str) -> Column:
    """A field of the parsed message."""
    return F.col("msg." + path)


def txt(column: Column) -> Column:
    """Exact text of a parsed scalar (numbers unmarked)."""
    return J.text(column)


def lookup(table: Mapping[str, str], key: Column) -> Column:
    """`table[key]` as a Spark expression (null when absent)."""
    return F.element_at(C.lit_map(dict(table)), key)


def text_map(*pairs: tuple[str, Column]) -> Column:
    """A map<string,string> of the pairs whose value is not null."""
    built = F.create_map(*[x for key, value in pairs for x in (F.lit(key), value.cast("string"))])
    return F.map_filter(built, lambda _k, v: v.isNotNull())


def prefixed(image: Column, prefix: str) -> Column:
    """A parsed map's entries as text, keys prefixed (for keeping whole sub-objects in `meta`)."""
    return F.transform_keys(J.image_text(image), lambda k, _v: F.concat(F.lit(prefix), k))


def overlay(base: Column, changes: Column) -> Column:
    """`base` with the entries of `changes` put over it (a full row from a partial one)."""
    kept = F.map_filter(base, lambda k, _v: ~F.array_contains(F.coalesce(F.map_keys(changes), F.array()), k))
    return F.when(base.isNull(), changes).when(changes.isNull(), base).otherwise(F.map_concat(kept, changes))


def first_reason(*checks: tuple[Column, str | Column]) -> Column:
    """The reason of the first check that holds, or null."""
    out = None
    for condition, reason in checks:
        reason_col = reason if isinstance(reason, Column) else F.lit(reason)
        out = F.when(condition, reason_col) if out is None else out.when(condition, reason_col)
    return out if out is not None else F.lit(None).cast("string")


def unknown_op_reason(field_name: str, raw_op: Column) -> Column:
    return F.concat(F.lit(f"unknown {field_name} '"), F.coalesce(raw_op, F.lit("null")), F.lit("'"))


def typed_map(entries: Column) -> Column:
    """map<string,string> from an array of (key, value) structs, null-safe."""
    return F.when(entries.isNull(), F.lit(None)).otherwise(F.map_from_entries(entries))


def emit(
    df: DataFrame,
    fields: Mapping[str, Column],
    reject_reason: Column,
    row_index: Column | None = None,
    pair_key: Column | None = None,
) -> DataFrame:
    """Select the pass-through columns plus every decoded field (absent ones as typed nulls).

    `pair_key` marks the halves of a split update (see `split_update`); `messages` counts the input
    messages a row stands for (1 here; 2 once a split update is paired).
    """
    unknown = set(fields) - set(DECODED_FIELDS)
    if unknown:
        raise KeyError(f"not decoded fields: {sorted(unknown)}")
    keep = [c for c in df.columns if c != "msg" and not c.startswith("_x")]
    cols = [F.col(c) for c in keep if c not in (*DECODED_FIELDS, ROW_INDEX, PAIR_KEY, MESSAGES)]
    cols.append((row_index if row_index is not None else F.lit(0)).cast("int").alias(ROW_INDEX))
    for name in DECODED_FIELDS:
        value = fields.get(name, F.lit(None))
        cols.append(value.cast(_FIELD_TYPES[name]).alias(name))
    cols.append(reject_reason.cast("string").alias("reject_reason"))
    cols.append((pair_key if pair_key is not None else F.lit(None)).cast("string").alias(PAIR_KEY))
    cols.append(F.lit(1).alias(MESSAGES))
    return df.select(*cols)


def _image_requirements(op: Column, before: Column, after: Column, ddl: Column, update_has_before: bool) -> Column:
    checks = [
        ((op == "INSERT") & after.isNull(), "INSERT without an after image"),
        ((op == "UPSERT") & after.isNull(), "UPSERT without an after image"),
        ((op == "DELETE") & before.isNull(), "DELETE without a before image"),
        ((op == "UPDATE") & after.isNull(), "UPDATE without an after image"),
    ]
    if update_has_before:
        checks.append(((op == "UPDATE") & before.isNull(), "UPDATE without a before image"))
    checks.append(((op == "DDL") & (ddl.isNull() | (F.trim(ddl) == "")), "DDL without DDL text"))
    return first_reason(*checks)


def finish(decoded: DataFrame, codec: Codec, options: Mapping[str, str]) -> DataFrame:
    """Normalise images, add the shared checks and `meta` entries; keep `reject_reason` last."""
    binary = options.get("binary", codec.binary)
    before_raw, after_raw = F.col("before_raw"), F.col("after_raw")
    image_keys = F.array_distinct(
        F.concat(F.coalesce(F.map_keys(before_raw), F.array()), F.coalesce(F.map_keys(after_raw), F.array()))
    )
    unknown_types = F.map_from_arrays(image_keys, F.transform(image_keys, lambda _k: F.lit("UNKNOWN")))
    types = F.map_concat(unknown_types, F.coalesce(F.col("column_types"), F.create_map().cast(J.TEXT_MAP)))
    units = F.col("temporal_units")
    staged = decoded.withColumn("column_types", F.when(F.size(image_keys) > 0, types).otherwise(F.col("column_types")))
    types = F.col("column_types")

    def norm(raw: Column) -> Column:
        text = J.image_text(raw) if codec.marked_json else raw
        return C.normalise_image(
            text, types, binary=binary, temporal_units=units, timezone=options.get("timezone", "UTC")
        )

    staged = staged.withColumn("before", norm(before_raw)).withColumn("after", norm(after_raw))
    bad = F.array_distinct(
        F.concat(
            F.coalesce(C.invalid_columns(before_raw, F.col("before")), F.array()),
            F.coalesce(C.invalid_columns(after_raw, F.col("after")), F.array()),
        )
    )
    bad_reason = F.concat(
        F.lit("value does not fit its type in column(s) "),
        F.array_join(F.transform(F.array_sort(bad), lambda c: F.concat(c, F.lit(":"), F.element_at(types, c))), ", "),
    )
    reason = F.coalesce(
        F.col(PRE_REJECT),
        F.col("reject_reason"),
        first_reason(
            (F.col("op").isNull(), "no op"),
            (
                F.col("event_time").isNull() & F.col("event_time_unit").isNotNull(),
                "event time is neither an epoch number nor a date-time",
            ),
        ),
        _image_requirements(F.col("op"), before_raw, after_raw, F.col("ddl"), codec.update_has_before),
        F.when(F.size(bad) > 0, bad_reason),
    )
    numbers = J.number_columns(before_raw, after_raw) if codec.marked_json else F.array().cast("array<string>")
    meta = F.map_concat(
        F.coalesce(F.col("meta"), F.create_map().cast(J.TEXT_MAP)),
        F.when(F.size(numbers) > 0, F.create_map(F.lit("cdc.json_numbers"), F.to_json(numbers))).otherwise(
            F.create_map().cast(J.TEXT_MAP)
        ),
    )
    return (
        staged.withColumn("meta", F.when(F.size(meta) > 0, meta))
        .withColumn("reject_reason", reason)
        .drop("before_raw", "after_raw", "temporal_units")
    )
