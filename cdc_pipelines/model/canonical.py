"""The canonical change: op vocabulary, logical types and value normalisation, in plain Python.

Every codec decodes into these terms and every encoder reads from them, so this module is the one
place that says what a change looks like once the source format is forgotten. Values are text, kept
digit for digit: nothing here passes an integer or decimal through a float or a 64-bit long.
(The Spark schemas of the tables are in `schema`.)
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import re
import zoneinfo
from functools import lru_cache

OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT", "DDL", "HEARTBEAT", "TRUNCATE", "TX_BEGIN", "TX_END", "OTHER")
# raw_op of the OTHER event a Kafka tombstone (a message with a null value) decodes to
TOMBSTONE = "TOMBSTONE"
ROW_OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT")
LOGICAL_TYPES = (
    "BOOLEAN", "INT", "DECIMAL", "FLOAT", "DOUBLE", "STRING", "BYTES", "DATE", "TIME", "DATETIME", "TIMESTAMP",
    "ZONED_DATETIME", "INTERVAL", "JSON", "UNKNOWN",
)  # fmt: skip
PARTITION_COLUMNS = ("dt", "source_topic")
# what a decode run counts: messages read = decoded + rejected + filtered (left out by a table filter);
# events are the canonical rows the decoded messages gave
MESSAGE_COUNTS = ("read", "decoded", "rejected", "filtered", "events")
BINARY_ENCODINGS = ("base64", "base16", "latin1")

# Source type names (lower case, without length/precision and UNSIGNED) -> logical type. One table
# serves MySQL/Oracle names (canal mysqlType, DataWorks schema.column), OMS __light_type names,
# DataWorks Kafka dataColumn names and Debezium/Kafka Connect schema types.
SOURCE_TYPE_TO_LOGICAL = {
    **dict.fromkeys(["bool", "boolean"], "BOOLEAN"),
    **dict.fromkeys("tinyint smallint mediumint int integer bigint int8 int16 int32 int64 long year serial short "
                    "byte".split(), "INT"),
    **dict.fromkeys(["decimal", "numeric", "number", "bigdecimal", "dec", "fixed"], "DECIMAL"),
    **dict.fromkeys(["float", "float32", "real", "binary_float"], "FLOAT"),
    **dict.fromkeys(["double", "float64", "double precision", "binary_double"], "DOUBLE"),
    **dict.fromkeys(["long varchar", *"char varchar var_string string tinytext text mediumtext longtext enum set "
                                      "varchar2 nvarchar2 nchar clob nclob rowid urowid".split()], "STRING"),
    **dict.fromkeys(["long raw", *"bytes binary varbinary tinyblob blob mediumblob longblob bit raw bfile geometry "
                                  "point linestring polygon multipoint multilinestring multipolygon "
                                  "geometrycollection geomcollection".split()], "BYTES"),
    "date": "DATE",
    "time": "TIME",
    "datetime": "DATETIME",
    **dict.fromkeys(["timestamp", "timestamp with local time zone"], "TIMESTAMP"),
    **dict.fromkeys(["zoned_datetime", "timestamp with time zone"], "ZONED_DATETIME"),
    **dict.fromkeys(["interval_day_to_second", "interval_year_to_month", "interval day to second",
                     "interval year to month", "interval"], "INTERVAL"),
    "json": "JSON",
}  # fmt: skip

# java.sql.Types codes (canal `sqlType`) -> logical type.
SQL_TYPE_CODE_TO_LOGICAL = {
    **dict.fromkeys(["-6", "5", "4", "-5"], "INT"),
    **dict.fromkeys(["6", "7"], "FLOAT"),
    "8": "DOUBLE",
    **dict.fromkeys(["2", "3"], "DECIMAL"),
    **dict.fromkeys(["1", "12", "-1", "-15", "-9", "-16", "2005", "2011"], "STRING"),
    "91": "DATE",
    **dict.fromkeys(["92", "2013"], "TIME"),
    "93": "DATETIME",
    **dict.fromkeys(["-7", "-2", "-3", "-4", "2004"], "BYTES"),
    "16": "BOOLEAN",
    "2014": "ZONED_DATETIME",
}

# Debezium / Kafka Connect logical schema names -> logical type.
CONNECT_NAME_TO_LOGICAL = {
    "io.debezium.time.Date": "DATE",
    "org.apache.kafka.connect.data.Date": "DATE",
    "io.debezium.time.Time": "TIME",
    "io.debezium.time.MicroTime": "TIME",
    "io.debezium.time.NanoTime": "TIME",
    "org.apache.kafka.connect.data.Time": "TIME",
    "io.debezium.time.Timestamp": "DATETIME",
    "io.debezium.time.MicroTimestamp": "DATETIME",
    "io.debezium.time.NanoTimestamp": "DATETIME",
    "org.apache.kafka.connect.data.Timestamp": "DATETIME",
    "io.debezium.time.ZonedTimestamp": "TIMESTAMP",
    "io.debezium.time.ZonedTime": "TIME",
    "io.debezium.time.Year": "INT",
    "io.debezium.data.Json": "JSON",
    "io.debezium.data.Bits": "BYTES",
    "io.debezium.data.geometry.Geometry": "BYTES",  # its WKB (`debezium.NAMED_VALUES`)
    "io.debezium.data.geometry.Geography": "BYTES",
    "io.debezium.data.geometry.Point": "BYTES",
    "io.debezium.data.Enum": "STRING",
    "io.debezium.data.EnumSet": "STRING",
    "org.apache.kafka.connect.data.Decimal": "DECIMAL",
    "io.debezium.data.VariableScaleDecimal": "DECIMAL",
    "io.debezium.time.MicroDuration": "INTERVAL",
    "io.debezium.time.Interval": "INTERVAL",
}

# The integer unit behind each Debezium temporal logical name (value is a count since the epoch or
# since midnight). Used to turn the integers into canonical text.
CONNECT_TEMPORAL_UNITS = {
    "io.debezium.time.Date": "days",
    "org.apache.kafka.connect.data.Date": "days",
    "io.debezium.time.Time": "ms",
    "org.apache.kafka.connect.data.Time": "ms",
    "io.debezium.time.MicroTime": "us",
    "io.debezium.time.NanoTime": "ns",
    "io.debezium.time.Timestamp": "ms",
    "org.apache.kafka.connect.data.Timestamp": "ms",
    "io.debezium.time.MicroTimestamp": "us",
    "io.debezium.time.NanoTimestamp": "ns",
}

# The integer unit the OMS Debezium serialisation uses for each logical type (seed 000 type table).
OMS_DEBEZIUM_TEMPORAL_UNITS = {"DATE": "days", "TIME": "us", "DATETIME": "ms"}

_INTEGER = re.compile(r"-?[0-9]+")
_SIGNED_INTEGER = re.compile(r"[+-]?[0-9]+")
_EPOCH = re.compile(r"(-?[0-9]+)(?:\.([0-9]{1,9}))?")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FLOAT = re.compile(_DECIMAL.pattern + r"|NaN|[+-]?Infinity|[+-]?inf")
_DATE = re.compile(r"[0-9]{4,}-[0-9]{2}-[0-9]{2}")
_TIME = re.compile(r"-?[0-9]{2,3}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?")
_DATETIME = re.compile(r"[0-9]{4,}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?: \S+)?")
# canonical TIMESTAMP text, a UTC instant; groups: date, clock, fraction digits
INSTANT = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?Z")
_LOCAL_TIMESTAMP = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?([+-][0-9]{2}:?[0-9]{2})?"
)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})*")
_FRACTION = re.compile(r"[0-9]{2}:[0-9]{2}:[0-9]{2}\.([0-9]+)")
_TYPE_DECORATION = re.compile(r"\(.*\)|\bunsigned\b|\bzerofill\b")
_UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_PER_SECOND = {"ms": 1000, "us": 10**6, "ns": 10**9}
_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH_SECOND = dt.datetime(1970, 1, 1)
_MAX_DECIMAL_DIGITS = 38


def full(pattern: re.Pattern, text: str) -> re.Match | None:
    """`pattern` over the whole text; like the JVM's `^...$`, a final line break may follow."""
    return pattern.fullmatch(text[:-1] if text.endswith("\n") else text)


@lru_cache(maxsize=4096)
def logical_type(source_type: str | None, overrides: tuple[tuple[str, str], ...] = ()) -> str | None:
    """Logical type of a source type name; `UNKNOWN` when the name is not in the table.

    The name is reduced to its base (no length, precision, UNSIGNED, ZEROFILL) before the lookup;
    `overrides` ((base name, logical type) pairs) are consulted first, for a dialect's own meanings.
    """
    if source_type is None:
        return None
    base = _TYPE_DECORATION.sub("", source_type.lower()).strip()
    return next((logical for name, logical in overrides if name == base), SOURCE_TYPE_TO_LOGICAL.get(base, "UNKNOWN"))


def _digit_unit(int_digits: int) -> str:
    """The unit an epoch count has by its digits: up to 11 s, 12-14 ms, 15-17 us, more ns."""
    return "s" if int_digits <= 11 else "ms" if int_digits <= 14 else "us" if int_digits <= 17 else "ns"


def _precision(fraction_digits: int) -> str:
    """The unit of a time written with this many digits below the second."""
    return "s" if fraction_digits <= 0 else "ms" if fraction_digits <= 3 else "us" if fraction_digits <= 6 else "ns"


def epoch_time(text: str | None, unit: str) -> tuple[int | None, str | None]:
    """(epoch micros, unit) of an epoch count whose unit the format fixes (Debezium `ts_ms`).

    The unit stays set for text that is no count, so the unreadable time is rejected, not dropped.
    """
    if text is None:
        return None, None
    if not full(_INTEGER, text):
        return None, unit
    n = int(text)
    micros = n * {"s": 10**6, "ms": 10**3}.get(unit, 1) // (1000 if unit == "ns" else 1)
    return _in_range(micros), unit


def _in_range(micros: int | None) -> int | None:
    """Epoch micros that fit a timestamp (a signed 64-bit count), else None."""
    return micros if micros is not None and -(2**63) <= micros < 2**63 else None


def time_of(text: str | None) -> tuple[int | None, str | None]:
    """(epoch micros, unit) of a time written either as an epoch number or as date-time text.

    The unit is set whenever there is text, so a time that does not parse shows as (None, unit).
    """
    if text is None:
        return None, None
    if text.isdigit() and text.isascii():  # the common case: a whole epoch count
        unit = _digit_unit(len(text))
        return _in_range(int(text) * 10**6 // 10 ** _UNIT_DIGITS[unit]), unit
    if match := full(_EPOCH, text):  # a sign or a fraction: 10 digits -> s, 13 -> ms, 16 -> us, 19 -> ns
        whole, frac = match.group(1), match.group(2) or ""
        unit = _digit_unit(len(whole.lstrip("-")))
        precision = _precision(_UNIT_DIGITS[unit] + len(frac))
        if len(whole.lstrip("-")) > 29:
            return None, precision
        scale = 10 ** len(frac)
        numerator = int(whole) * scale + (-1 if whole.startswith("-") else 1) * int(frac or "0")
        return _in_range(numerator * 10**6 // (scale * 10 ** _UNIT_DIGITS[unit])), precision
    # date-time text (`YYYY-MM-DD[ T]HH:MM:SS[.f][zone]`, UTC when it has no zone)
    fraction = _FRACTION.search(text)
    precision = _precision(len(fraction.group(1)) if fraction else 0)
    try:
        parsed = dt.datetime.fromisoformat(text.replace("T", " ").removesuffix("Z").strip())
    except ValueError:
        return None, precision
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    delta = parsed - _EPOCH_SECOND
    return (delta.days * 86_400 + delta.seconds) * 10**6 + delta.microseconds, precision


def micros_to_datetime(micros: int | None) -> dt.datetime | None:
    """Naive UTC datetime of epoch microseconds (None outside Python's years 1-9999)."""
    if micros is None:
        return None
    try:
        return _EPOCH_SECOND + dt.timedelta(microseconds=micros)
    except OverflowError:
        return None


def _second_text(seconds: int, sep: str) -> str | None:
    moment = micros_to_datetime(seconds * 10**6)
    return None if moment is None else moment.strftime(f"%Y-%m-%d{sep}%H:%M:%S")


def epoch_to_instant_text(text: str, unit: str | None = None) -> str | None:
    """Canonical TIMESTAMP text (`YYYY-MM-DDTHH:MM:SS[.f]Z`, UTC) of an epoch in s/ms/us/ns.

    Seconds may carry a fraction (`1606233662.012345`, OMS); millis may carry a 9-digit
    nanosecond-of-second fraction (the DataWorks `13.9` form). The fraction digits are kept as written.
    `unit` is the format's fixed unit (`s`, `ms`, `us`, `ns`); without one the unit is told from the
    digit count.
    """
    match = full(_EPOCH, text)
    if not match:
        return None
    whole, frac = match.groups()
    frac = frac or ""
    if len(whole.lstrip("-")) > _MAX_DECIMAL_DIGITS:
        return None
    width = _UNIT_DIGITS.get(unit) if unit in _UNIT_DIGITS else _UNIT_DIGITS[_digit_unit(len(whole.lstrip("-")))]
    per_second = 10**width
    seconds, sub = divmod(int(whole), per_second)
    fraction = frac if (width == 0 or frac) else str(sub).rjust(width, "0")
    second_text = _second_text(seconds, "T")
    if second_text is None:
        return None
    return second_text + ("." + fraction if fraction else "") + "Z"


def integer_to_temporal_text(value: str, logical: str, unit: str) -> str | None:
    """Canonical text of a temporal value given as an integer count (Debezium encodings).

    DATE days -> `YYYY-MM-DD`; TIME ms/us/ns since midnight -> `HH:MM:SS.f` with the unit's digits;
    DATETIME ms/us/ns since the epoch -> `YYYY-MM-DD HH:MM:SS.f` (naive).
    """
    if not full(_INTEGER, value):
        return None
    n = int(value)
    if not -(2**63) <= n < 2**63:
        return None
    per_second = _PER_SECOND.get(unit, 1)
    secs, sub = divmod(n, per_second)
    dot_frac = "." + str(sub).rjust(len(str(per_second)) - 1, "0") if unit in _PER_SECOND else ""
    if logical == "DATE":
        if unit != "days" or not -(2**31) <= n < 2**31:
            return None
        try:
            return (_EPOCH_DAY + dt.timedelta(days=n)).isoformat()
        except OverflowError:
            return None
    if logical == "TIME":
        if secs >= 86400:
            return None
        day_secs = secs % 86400
        return f"{day_secs // 3600:02d}:{day_secs % 3600 // 60:02d}:{day_secs % 60:02d}{dot_frac}"
    if logical == "DATETIME":
        second_text = _second_text(secs, " ")
        return None if second_text is None else second_text + dot_frac
    return None


@lru_cache(maxsize=256)
def zone(name: str) -> dt.tzinfo:
    """A zone by IANA name or by offset (`+08:00`, `+0800`)."""
    match = re.fullmatch(r"([+-])([0-9]{2}):?([0-9]{2})", name)
    if not match:
        return zoneinfo.ZoneInfo(name)
    sign, hours, minutes = match.groups()
    delta = dt.timedelta(hours=int(hours), minutes=int(minutes))
    return dt.timezone(-delta if sign == "-" else delta)


def instant_seconds(value: str) -> tuple[int, str] | None:
    """(epoch seconds, fraction digits as written) of canonical TIMESTAMP text; None for other text."""
    match = INSTANT.fullmatch(value)
    if not match:
        return None
    day, clock, fraction = match.groups()
    delta = dt.datetime.fromisoformat(f"{day}T{clock}") - _EPOCH_SECOND
    return delta.days * 86400 + delta.seconds, fraction or ""


def local_to_instant_text(value: str, timezone: str) -> str | None:
    """Canonical TIMESTAMP text of `YYYY-MM-DD HH:MM:SS[.f][+hh:mm]`: its own offset, else `timezone`.

    Zone shifts are whole seconds, so the fraction digits are carried over as written.
    """
    match = full(_LOCAL_TIMESTAMP, value)
    if not match:
        return None
    day, clock, frac, offset = match.groups()
    try:
        wall = dt.datetime.fromisoformat(f"{day} {clock}")
        utc = wall.replace(tzinfo=zone(offset or timezone)).astimezone(dt.UTC)
    except (ValueError, OverflowError):
        return None
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + ("." + frac if frac else "") + "Z"


def base16_to_base64(value: str) -> str | None:
    """Standard base64 of hex text; None when the text is not hex."""
    if not full(_HEX, value):
        return None
    return base64.b64encode(binascii.unhexlify(value.strip())).decode()


def _boolean(value: str, binary: str, unit: str | None, timezone: str) -> str | None:
    lowered = value.lower()
    return "true" if lowered in ("1", "true") else "false" if lowered in ("0", "false") else None


def _matching(pattern: re.Pattern):
    """A normaliser that keeps text matching `pattern` whole (a final line break allowed, as the JVM's
    `$` allows one) and refuses the rest."""
    match = re.compile(f"(?:{pattern.pattern})\n?").fullmatch

    def keep(value: str, binary: str, unit: str | None, timezone: str) -> str | None:
        return value if match(value) else None

    return keep


def _timestamp(value: str, binary: str, unit: str | None, timezone: str) -> str | None:
    if full(_EPOCH, value):
        return epoch_to_instant_text(value, unit)
    if full(INSTANT, value):
        return value
    return local_to_instant_text(value, timezone)


def _bytes(value: str, binary: str, unit: str | None, timezone: str) -> str | None:
    if binary == "base16":
        return base16_to_base64(value)
    if binary == "latin1":  # bytes one per character (open-source canal)
        try:
            return base64.b64encode(value.encode("latin-1")).decode()
        except UnicodeEncodeError:
            return None
    return value if full(_BASE64, value) else None


# logical type -> its normaliser; types not listed keep their text as written
_NORMALISERS = {
    "BOOLEAN": _boolean,
    "INT": _matching(_SIGNED_INTEGER),
    "DECIMAL": _matching(_DECIMAL),
    "FLOAT": _matching(_FLOAT),
    "DOUBLE": _matching(_FLOAT),
    "DATE": _matching(_DATE),
    "TIME": _matching(_TIME),
    "DATETIME": _matching(_DATETIME),
    "TIMESTAMP": _timestamp,
    "BYTES": _bytes,
}
_COUNTED_TEMPORAL = frozenset({"DATE", "TIME", "DATETIME"})


def scaled_decimal_text(unscaled: int, scale: int) -> str:
    """The digits of unscaled * 10^-scale as Java's `BigDecimal.toPlainString` writes them (`1250`, 2 ->
    `12.50`): a Connect Decimal's or a VariableScaleDecimal's value, no digit lost or added."""
    sign, digits = ("-" if unscaled < 0 else ""), str(abs(unscaled))
    if scale <= 0:
        return sign + digits + "0" * -scale if unscaled else "0"
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def normalise_value(
    value: str | None, logical: str, *, binary: str = "base64", temporal_unit: str | None = None, timezone: str = "UTC"
) -> str | None:
    """Canonical text of one image value of the given logical type, or None when it does not fit.

    `binary` is how the format writes BYTES (`base64` kept, `base16` and `latin1` re-encoded);
    `temporal_unit` is the integer unit of temporal values (`days`, `ms`, `us`, `ns`) for formats
    that write dates and times as counts (for a TIMESTAMP epoch: its fixed unit, not its digit
    count); `timezone` is the zone of TIMESTAMP text without offset.
    """
    if value is None:
        return None
    normaliser = _NORMALISERS.get(logical)
    if normaliser is None:
        return value
    if temporal_unit is not None and logical in _COUNTED_TEMPORAL and full(_INTEGER, value):
        return integer_to_temporal_text(value, logical, temporal_unit)
    return normaliser(value, binary, temporal_unit, timezone)


def event_id(source_format: str, source_topic: str, source_file: str, source_line: int, row: int) -> str:
    """Deterministic event id: the same message in the same file gives the same id on every run."""
    key = "\u0001".join((source_format, source_topic, source_file, str(source_line), str(row)))
    return hashlib.sha256(key.encode()).hexdigest()[:32]
