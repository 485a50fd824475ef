"""What every codec shares: the codec record, its options, and how a decoder says no.

A decoder is a plain function `decode(message, options) -> list[dict]` over one message (the line's
bytes; a DTS Avro container record; a DataHub TUPLE CSV row as a dict). It returns one *raw event* per
change the message carries, or raises `Reject` with the reason. A raw event holds the canonical fields
(`op`, `raw_op`, `db`, `db_schema`, `table_name`, `event_time` and `sync_time` as epoch microseconds,
`event_time_unit`, `tx_id`, `seq`, `position`, `pk_columns`, `column_types`, `source_types`, `ddl`,
`meta`: text values, where a sub-object kept whole keeps its nulls) with the images `before` / `after`
as parsed, not yet normalised (see `jsontext`), plus `temporal_units` (integer unit of temporal
columns), `row_index` (the row of a multi-row message) and `pair_key` (the key of a split-update
half). `messages.finish_event` then does what is the same for every format: normalise values by
logical type, check that each op has what it needs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cdc_pipelines import canonical as C
from cdc_pipelines.formats.encoding import Unsupported

Decoder = Callable[[object, Mapping[str, str]], list[dict]]
OPTION_CHOICES = {
    "legacy": ("false", "true"),
    "binary": C.BINARY_ENCODINGS,
    "schema": ("auto", "true", "false"),
    "merged": ("auto", "true", "false"),
}


class Reject(Exception):  # noqa: N818 - a verdict on a message, not a program error
    """Why a message cannot be decoded; it goes to the rejects with this reason."""


class OptionError(ValueError):
    """An option a codec does not know, or a value it cannot take."""


def _check_timezone(name: str) -> None:
    if re.fullmatch(r"[+-][0-9]{2}:[0-9]{2}", name):
        return
    try:
        C.zone(name)
    except (KeyError, ValueError):
        raise OptionError(f"timezone {name!r} is neither an IANA zone nor an offset like +08:00") from None


@dataclass(frozen=True)
class Codec:
    """A format id bound to its decode and encode functions and what shapes its messages take.

    `messages` says what a decoder is given: `json` (a line's bytes), `tuple` (JSON lines, or CSV rows
    under a header line, given as dicts), `avro` (one schemaless Avro record's bytes).
    """

    format_id: str
    decode: Decoder
    encode: Callable[[dict, Mapping[str, str]], list]
    options: Mapping[str, str] = field(default_factory=dict)
    binary: str = "base64"
    update_has_before: bool = True
    multi_row: bool = False
    split_update: bool = False
    messages: str = "json"
    binary_messages: bool = False
    description: str = ""
    # fields a replay of the same change sets anew (processing times): not part of what identifies a
    # delivery when repeats are found (`cdc_pipelines.duplicates`); canonical names or `meta.<key>`
    delivery_fields: tuple[str, ...] = ()

    def encode_event(self, event: dict, options: Mapping[str, str]) -> list:
        """The messages of one canonical event; Unsupported for what this format cannot carry.

        An UPDATE without a before image is Unsupported wherever this format's decoder requires one,
        so a target never writes what its own decoder would reject.
        """
        if event["op"] == "OTHER" and event.get("raw_op") == C.TOMBSTONE:
            raise Unsupported("a Kafka tombstone (null value) carries no change to encode")
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


def unknown_op(field_name: str, raw_op: object) -> Reject:
    """The reject of an op the format does not define."""
    return Reject(f"unknown {field_name} '{'null' if raw_op is None else raw_op}'")


def op_of(raw_op: str | None, ops: Mapping[str, str], field_name: str) -> str:
    """The canonical op of a message's op as written; Reject when it is missing or one the format does
    not define."""
    if raw_op is None:
        raise Reject(f"missing {field_name}")
    op = ops.get(raw_op)
    if op is None:
        raise unknown_op(field_name, raw_op)
    return op


def overlay(base: dict | None, changes: dict | None) -> dict | None:
    """`base` with the entries of `changes` put over it (a full row from a partial one)."""
    if base is None:
        return changes
    if changes is None:
        return base
    return {**base, **changes}
