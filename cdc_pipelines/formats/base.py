"""What every codec shares: the codec record, its options, the raw event, and how a decoder says no.

A decoder is a plain function `decode(message, options) -> list[RawEvent]` over one message (the
line's bytes; a DTS Avro container record; a DataHub TUPLE CSV row as a dict). It returns one raw
event (`RawEvent`) per change the message carries, or raises `Reject` with the reason.
`messages.finish_event` then does what is the same for every format: normalise values by logical
type, check that each op has what it needs.

A codec declares its options beside it (`Option`); `Codec.resolve_options` checks them all once,
before a run, so a decoder or encoder reads them without checking them per message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypedDict

from cdc_pipelines.formats.encoding import Unsupported
from cdc_pipelines.model import canonical as C

# reject reasons more than one format gives, written once so that every format says them alike
NOT_JSON_OBJECT = "not a valid JSON object"
BAD_EVENT_TIME = "event time is neither an epoch number nor a date-time"
BAD_SYNC_TIME = "sync time is neither an epoch number nor a date-time"
# the DDL kinds canal writes in `type`; DataWorks 2.0 writes the same ones in `op`
DDL_KINDS = ("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX", "DINDEX")
# a signed 64-bit integer: the range of a timestamp's microseconds (Spark's) and of an Avro or Java long
LONGS = range(-(2**63), 2**63)


class RawEvent(TypedDict, total=False):
    """One change as a decoder gives it, before `messages.finish_event`; any field may be left out.

    Values are text (a sub-object kept whole keeps its nulls), times epoch microseconds. A plain dict
    at run time: the type only names the fields, so decoders pay nothing for it.
    """

    op: str  # canonical op (`canonical.OPS`)
    raw_op: str | None  # the op as the message writes it
    db: str | None
    db_schema: str | None
    table_name: str | None
    event_time: int | None  # when the source made the change
    event_time_unit: str | None  # the unit it was written in; set without event_time: unreadable
    sync_time: int | None  # when the CDC tool wrote the message
    tx_id: str | None
    seq: str | None
    position: str | None
    pk_columns: list[str] | None
    before: dict | None  # images as parsed, not yet normalised (see `jsontext`)
    after: dict | None
    column_types: dict[str, str] | None  # column -> logical type
    source_types: dict[str, str] | None  # column -> type as the source names it
    ddl: str | None
    meta: dict[str, str | None] | None  # see `meta_keys` for the `cdc.*` keys
    temporal_units: dict[str, str] | None  # the integer unit of temporal columns
    row_index: int  # the row of a multi-row message
    pair_key: str | None  # the key that pairs the halves of a split update


Decoder = Callable[[object, Mapping[str, str]], list[RawEvent]]


class Reject(Exception):  # noqa: N818 - a verdict on a message, not a program error
    """Why a message cannot be decoded; it goes to the rejects with this reason."""


class OptionError(ValueError):
    """An option a codec does not know, or a value it cannot take."""


def check_timezone(name: str) -> None:
    """OptionError unless `name` is an IANA zone or an offset like +08:00 (the `timezone` options)."""
    if re.fullmatch(r"[+-][0-9]{2}:[0-9]{2}", name):
        return
    try:
        C.zone(name)
    except (KeyError, ValueError):
        raise OptionError(f"timezone {name!r} is neither an IANA zone nor an offset like +08:00") from None


@dataclass(frozen=True)
class Option:
    """One option of a codec, declared beside it, so that its name, default, allowed values and
    meaning are in one place and `Codec.resolve_options` can check every value before a run.

    `check` takes a value and raises OptionError when the codec cannot take it.
    """

    name: str
    default: str
    description: str
    choices: tuple[str, ...] | None = None
    check: Callable[[str], object] | None = None

    def validate(self, value: str, format_id: str) -> None:
        if self.choices is not None and value not in self.choices:
            raise OptionError(f"option {self.name}={value!r} of {format_id} must be one of {', '.join(self.choices)}")
        if self.check is not None:
            self.check(value)


def timezone_option(read: str) -> Option:
    """The `timezone` option of a format that writes `read` (date-time text meant as an instant)
    without a zone: one default and one check wherever it is declared."""
    return Option(
        "timezone",
        "UTC",
        f"zone of {read} without an offset: an IANA zone or an offset like +08:00",
        check=check_timezone,
    )


def binary_option(default: str, writers: str) -> Option:
    """The `binary` option of a format whose writers differ in how they write BYTES (`writers` says which)."""
    return Option("binary", default, f"how BYTES values are written: {writers}", choices=C.BINARY_ENCODINGS)


@dataclass(frozen=True)
class Codec:
    """A format id bound to its decode and encode functions and what shapes its messages take.

    `messages` says what a decoder is given: `json` (a line's bytes), `tuple` (JSON lines, or CSV rows
    under a header line, given as dicts), `avro` (one schemaless Avro record's bytes).
    """

    format_id: str
    decode: Decoder
    encode: Callable[[dict, Mapping[str, str]], list]
    options: tuple[Option, ...] = ()
    binary: str = "base64"
    update_has_before: bool = True
    # what the quality rules hold the format's events to: the unit its event times are written in (None:
    # none promised), whether every message carries one, whether they name the primary key, and whether
    # they repeat the key's values in meta['record_primary_value'] (OMS)
    event_time_unit: str | None = None
    event_time_required: bool = True
    names_pk: bool = True
    record_primary_value: bool = False
    split_update: bool = False
    messages: str = "json"
    binary_messages: bool = False
    description: str = ""
    # fields a replay of the same change sets anew (processing times): not part of what identifies a
    # delivery when repeats are found (`cdc_pipelines.decode.redeliveries`); canonical names or `meta.<key>`
    delivery_fields: tuple[str, ...] = ()
    # whether one parsed JSON message is of this format (format detection); tried in
    # `formats.DETECTION_ORDER`, so it may match a more specific format's messages tried before it
    recognise: Callable[[dict], bool] | None = None
    # binary messages an encode writes as `.avro` container files of their records (DTS Avro), not as
    # `value_b64` lines
    containers: bool = False
    # a Kafka key of a binary topic (its bytes in base64, as the Kafka reader gives them) -> the key's
    # JSON text (`keys_from: kafka`); None: the key is text as it is
    decode_key: Callable[[str, Mapping[str, str]], str] | None = None
    # checks, once before a Spark job, what the codec needs beside its messages (the schema registry
    # answers): an error there stops the run before any task (in process, the first message finds it)
    preflight: Callable[[Mapping[str, str]], None] | None = None

    def check_ready(self, options: Mapping[str, str]) -> None:
        if self.preflight is not None:
            self.preflight(options)

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

    @property
    def defaults(self) -> dict[str, str]:
        """{name: default} of this codec's options."""
        return {option.name: option.default for option in self.options}

    def resolve_options(self, given: Mapping[str, str]) -> dict[str, str]:
        """Every option's value (the given ones over the defaults), checked: the one check before a
        run; OptionError for an option this codec does not have or a value it cannot take."""
        defaults = self.defaults
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            known = ", ".join(sorted(defaults)) or "none"
            raise OptionError(f"format {self.format_id} has no option {', '.join(unknown)} (options: {known})")
        resolved = {**defaults, **given}
        for option in self.options:
            option.validate(resolved[option.name], self.format_id)
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
