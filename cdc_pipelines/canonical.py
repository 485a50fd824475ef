"""The canonical change table: its Spark schema, op vocabulary, logical types and value normalisation.

Every codec decodes into these columns and every encoder reads from them, so this module is the one
place that says what a change looks like once the source format is forgotten. Values are text, kept
digit for digit: nothing here passes an integer or decimal through a float or a 64-bit long.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT", "DDL", "HEARTBEAT", "TRUNCATE", "TX_BEGIN", "TX_END", "OTHER")
ROW_OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT")
LOGICAL_TYPES = (
    "BOOLEAN",
    "INT",
    "DECIMAL",
    "FLOAT",
    "DOUBLE",
    "STRING",
    "BYTES",
    "DATE",
    "TIME",
    "DATETIME",
    "TIMESTAMP",
    "ZONED_DATETIME",
    "INTERVAL",
    "JSON",
    "UNKNOWN",
)
TIME_UNITS = ("s", "ms", "us", "ns")
PARTITION_COLUMNS = ("dt", "source_topic")

_TEXT = T.StringType()
_TEXT_MAP = T.MapType(_TEXT, _TEXT, valueContainsNull=True)

CANONICAL_SCHEMA = T.StructType(
    [
        T.StructField("event_id", _TEXT, False),
        T.StructField("source_format", _TEXT, False),
        T.StructField("source_topic", _TEXT, False),
        T.StructField("source_file", _TEXT, False),
        T.StructField("source_line", T.LongType(), False),
        T.StructField("op", _TEXT, False),
        T.StructField("raw_op", _TEXT),
        T.StructField("db", _TEXT),
        T.StructField("db_schema", _TEXT),
        T.StructField("table_name", _TEXT),
        T.StructField("event_time", T.TimestampType()),
        T.StructField("event_time_unit", _TEXT),
        T.StructField("sync_time", T.TimestampType()),
        T.StructField("tx_id", _TEXT),
        T.StructField("seq", _TEXT),
        T.StructField("position", _TEXT),
        T.StructField("pk_columns", T.ArrayType(_TEXT)),
        T.StructField("before", _TEXT_MAP),
        T.StructField("after", _TEXT_MAP),
        T.StructField("column_types", _TEXT_MAP),
        T.StructField("source_types", _TEXT_MAP),
        T.StructField("ddl", _TEXT),
        T.StructField("meta", _TEXT_MAP),
        T.StructField("dt", _TEXT, False),
    ]
)
CANONICAL_COLUMNS = tuple(f.name for f in CANONICAL_SCHEMA.fields)

REJECTS_SCHEMA = T.StructType(
    [
        T.StructField("source_format", _TEXT, False),
        T.StructField("source_topic", _TEXT, False),
        T.StructField("source_file", _TEXT, False),
        T.StructField("source_line", T.LongType(), False),
        T.StructField("raw", _TEXT),
        T.StructField("raw_encoding", _TEXT, False),
        T.StructField("reason", _TEXT, False),
        T.StructField("dt", _TEXT, False),
    ]
)
REJECTS_COLUMNS = tuple(f.name for f in REJECTS_SCHEMA.fields)

# Source type names (lower case, without length/precision and UNSIGNED) -> logical type. One table
# serves MySQL/Oracle names (canal mysqlType, DataWorks schema.column), OMS __light_type names,
# DataWorks Kafka dataColumn names and Debezium/Kafka Connect schema types.
SOURCE_TYPE_TO_LOGICAL = {
    **dict.fromkeys(["bool", "boolean"], "BOOLEAN"),
    **dict.fromkeys(
        [
            "tinyint",
            "smallint",
            "mediumint",
            "int",
            "integer",
            "bigint",
            "int8",
            "int16",
            "int32",
            "int64",
            "long",
            "year",
            "serial",
            "short",
            "byte",
        ],
        "INT",
    ),
    **dict.fromkeys(["decimal", "numeric", "number", "bigdecimal", "dec", "fixed"], "DECIMAL"),
    **dict.fromkeys(["float", "float32", "real", "binary_float"], "FLOAT"),
    **dict.fromkeys(["double", "float64", "double precision", "binary_double"], "DOUBLE"),
    **dict.fromkeys(
        [
            "char",
            "varchar",
            "var_string",
            "string",
            "tinytext",
            "text",
            "mediumtext",
            "longtext",
            "enum",
            "set",
            "varchar2",
            "nvarchar2",
            "nchar",
            "clob",
            "nclob",
            "rowid",
            "urowid",
            "long varchar",
        ],
        "STRING",
    ),
    **dict.fromkeys(
        [
            "bytes",
            "binary",
            "varbinary",
            "tinyblob",
            "blob",
            "mediumblob",
            "longblob",
            "bit",
            "raw",
            "bfile",
            "long raw",
            "geometry",
            "point",
            "linestring",
            "polygon",
            "multipoint",
            "multilinestring",
            "multipolygon",
            "geometrycollection",
            "geomcollection",
        ],
        "BYTES",
    ),
    "date": "DATE",
    "time": "TIME",
    "datetime": "DATETIME",
    **dict.fromkeys(["timestamp", "timestamp with local time zone"], "TIMESTAMP"),
    **dict.fromkeys(["zoned_datetime", "timestamp with time zone"], "ZONED_DATETIME"),
    **dict.fromkeys(
        [
            "interval_day_to_second",
            "interval_year_to_month",
            "interval day to second",
            "interval year to month",
            "interval",
        ],
        "INTERVAL",
    ),
    "json": "JSON",
}

# java.sql.Types codes (canal `sqlType`) -> logical type.
SQL_TYPE_CODE_TO_LOGICAL = {
    "-7": "BYTES",
    "-6": "INT",
    "5": "INT",
    "4": "INT",
    "-5": "INT",
    "6": "FLOAT",
    "7": "FLOAT",
    "8": "DOUBLE",
    "2": "DECIMAL",
    "3": "DECIMAL",
    "1": "STRING",
    "12": "STRING",
    "-1": "STRING",
    "-15": "STRING",
    "-9": "STRING",
    "-16": "STRING",
    "2005": "STRING",
    "2011": "STRING",
    "91": "DATE",
    "92": "TIME",
    "93": "DATETIME",
    "-2": "BYTES",
    "-3": "BYTES",
    "-4": "BYTES",
    "2004": "BYTES",
    "16": "BOOLEAN",
    "2013": "TIME",
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

_INTEGER_TEXT = r"^-?[0-9]+$"
_EPOCH_TEXT = r"^(-?[0-9]+)(?:\.([0-9]{1,9}))?$"
_UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def lit_map(mapping: dict[str, str]) -> Column:
    """A literal map<string,string> Spark column from a Python dict."""
    return F.create_map(*[F.lit(x) for kv in mapping.items() for x in kv])


def logical_type(source_type: Column, overrides: dict[str, str] | None = None) -> Column:
    """Logical type of a source type name; `UNKNOWN` when the name is not in the table.

    The name is reduced to its base (no length, precision, UNSIGNED, ZEROFILL) before the lookup;
    `overrides` (base name -> logical type) is consulted first, for a dialect's own meanings.
    """
    base = F.trim(F.regexp_replace(F.lower(source_type), r"\(.*\)|\bunsigned\b|\bzerofill\b", ""))
    table = {**SOURCE_TYPE_TO_LOGICAL, **(overrides or {})}
    return F.when(source_type.isNull(), F.lit(None)).otherwise(
        F.coalesce(F.element_at(lit_map(table), base), F.lit("UNKNOWN"))
    )


def epoch_unit(text: Column) -> Column:
    """Precision an epoch number carries, from its digits: 10 -> s, 13 -> ms, 16 -> us, 19 -> ns."""
    int_digits = F.length(F.regexp_extract(text, r"^-?([0-9]+)", 1))
    frac_digits = F.length(F.regexp_extract(text, r"\.([0-9]+)$", 1))
    base = F.when(int_digits <= 11, 0).when(int_digits <= 14, 3).when(int_digits <= 17, 6).otherwise(9)
    total = base + frac_digits
    return (
        F.when(~text.rlike(_EPOCH_TEXT), F.lit(None))
        .when(total <= 0, "s")
        .when(total <= 3, "ms")
        .when(total <= 6, "us")
        .otherwise("ns")
    )


def epoch_to_timestamp(text: Column) -> Column:
    """Spark timestamp of an epoch given as text in s, ms, us or ns (told apart by digit count)."""
    int_digits = F.length(F.regexp_extract(text, r"^-?([0-9]+)", 1))
    per_second = F.when(int_digits <= 11, 1).when(int_digits <= 14, 1000).when(int_digits <= 17, 10**6).otherwise(10**9)
    seconds = text.try_cast(T.DecimalType(38, 9)) / per_second
    micros = F.floor(seconds * F.lit(10**6))
    return F.when(text.rlike(_EPOCH_TEXT), F.timestamp_micros(micros.try_cast(T.LongType())))


def epoch_time(text: Column, unit: str) -> tuple[Column, Column]:
    """(timestamp, unit) of an epoch count whose unit the format fixes (Debezium `ts_ms`)."""
    n = text.try_cast(T.DecimalType(38, 0))
    micros = n * {"s": 10**6, "ms": 10**3, "us": 1}.get(unit, 1) / ({"ns": 1000}.get(unit, 1))
    ok = text.rlike(_INTEGER_TEXT)
    # the unit stays set for text that is no count, so the unreadable time is rejected, not dropped
    return F.when(ok, F.timestamp_micros(F.floor(micros).try_cast(T.LongType()))), F.when(text.isNotNull(), F.lit(unit))


def text_time_unit(text: Column) -> Column:
    """Precision of a date-time text (`2020-11-25T00:01:02[.ffffff]`), from its fraction digits."""
    frac = F.length(F.regexp_extract(text, r"[0-9]{2}:[0-9]{2}:[0-9]{2}\.([0-9]+)", 1))
    return F.when(frac == 0, "s").when(frac <= 3, "ms").when(frac <= 6, "us").otherwise("ns")


def time_of(text: Column) -> tuple[Column, Column]:
    """(timestamp, unit) of an event time written either as an epoch number or as date-time text."""
    is_epoch = text.rlike(_EPOCH_TEXT)
    iso = F.regexp_replace(F.regexp_replace(text, "T", " "), r"Z$", "")
    ts = F.when(is_epoch, epoch_to_timestamp(text)).otherwise(F.try_to_timestamp(iso))
    unit = F.when(text.isNull(), F.lit(None)).when(is_epoch, epoch_unit(text)).otherwise(text_time_unit(text))
    return ts, unit


def epoch_to_instant_text(text: Column, unit: Column | None = None) -> Column:
    """Canonical TIMESTAMP text (`YYYY-MM-DDTHH:MM:SS[.f]Z`, UTC) of an epoch in s/ms/us/ns.

    Seconds may carry a fraction (`1606233662.012345`, OMS); millis may carry a 9-digit
    nanosecond-of-second fraction (the DataWorks `13.9` form). The fraction digits are kept as written.
    `unit` is the format's fixed unit (`s`, `ms`, `us`, `ns`); without one (or where it is null) the
    unit is told from the digit count.
    """
    whole = F.regexp_extract(text, _EPOCH_TEXT, 1)
    frac = F.regexp_extract(text, _EPOCH_TEXT, 2)
    digits = F.length(F.regexp_replace(whole, "-", ""))
    per_second = F.when(digits <= 11, 1).when(digits <= 14, 1000).when(digits <= 17, 10**6).otherwise(10**9)
    width = F.when(digits <= 11, 0).when(digits <= 14, 3).when(digits <= 17, 6).otherwise(9)
    if unit is not None:
        per_second = F.coalesce(
            F.element_at(lit_map({u: str(10**d) for u, d in _UNIT_DIGITS.items()}), unit).cast("long"), per_second
        )
        width = F.coalesce(F.element_at(lit_map({u: str(d) for u, d in _UNIT_DIGITS.items()}), unit).cast("int"), width)
    whole_dec = whole.try_cast(T.DecimalType(38, 0))
    seconds = F.floor(whole_dec / per_second)
    sub = (whole_dec - seconds * per_second).try_cast(T.LongType())
    sub_text = F.when(width == 0, F.lit("")).otherwise(F.lpad(sub.cast("string"), width, "0"))
    fraction = F.when((width == 0) | (frac != ""), frac).otherwise(sub_text)
    second_text = F.date_format(F.timestamp_seconds(seconds.try_cast(T.LongType())), "yyyy-MM-dd'T'HH:mm:ss")
    return F.when(
        text.rlike(_EPOCH_TEXT),
        F.concat(second_text, F.when(fraction != "", F.concat(F.lit("."), fraction)).otherwise(F.lit("")), F.lit("Z")),
    )


def _fixed_fraction(count: Column, per_second: int) -> Column:
    digits = len(str(per_second)) - 1
    return F.lpad(F.pmod(count, F.lit(per_second)).cast("string"), digits, "0")


def integer_to_temporal_text(value: Column, logical: Column, unit: Column) -> Column:
    """Canonical text of a temporal value given as an integer count (Debezium encodings).

    DATE days -> `YYYY-MM-DD`; TIME ms/us/ns since midnight -> `HH:MM:SS.f` with the unit's digits;
    DATETIME ms/us/ns since the epoch -> `YYYY-MM-DD HH:MM:SS.f` (naive).
    """
    n = value.try_cast(T.LongType())
    per_second = F.when(unit == "ms", 1000).when(unit == "us", 10**6).when(unit == "ns", 10**9).otherwise(1)
    secs = F.floor(n / per_second)
    frac = (
        F.when(unit == "ms", _fixed_fraction(n, 1000))
        .when(unit == "us", _fixed_fraction(n, 10**6))
        .when(unit == "ns", _fixed_fraction(n, 10**9))
    )
    dot_frac = F.when(frac.isNotNull(), F.concat(F.lit("."), frac)).otherwise(F.lit(""))
    day_secs = F.pmod(secs, F.lit(86400))
    time_text = F.format_string(
        "%02d:%02d:%02d",
        F.floor(day_secs / 3600),
        F.floor(F.pmod(day_secs, F.lit(3600)) / 60),
        F.pmod(day_secs, F.lit(60)),
    )
    return (
        F.when(~value.rlike(_INTEGER_TEXT), F.lit(None))
        .when(
            (logical == "DATE") & (unit == "days"),
            F.date_format(F.date_add(F.lit("1970-01-01").cast("date"), n.try_cast("int")), "yyyy-MM-dd"),
        )
        .when((logical == "TIME") & (secs < 86400), F.concat(time_text, dot_frac))
        .when(
            logical == "DATETIME",
            F.concat(F.date_format(F.timestamp_seconds(secs), "yyyy-MM-dd HH:mm:ss"), dot_frac),
        )
    )


def base16_to_base64(value: Column) -> Column:
    """Standard base64 of hex text; null when the text is not hex.

    Spark's `base64` may chunk its output into MIME lines (`spark.sql.chunkBase64String.enabled`),
    so line breaks are removed: canonical BYTES are one unbroken standard base64 string.
    """
    return F.when(value.rlike("^(?:[0-9A-Fa-f]{2})*$"), F.regexp_replace(F.base64(F.unhex(value)), "[\\r\\n]", ""))


_DECIMAL_TEXT = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_FLOAT_SPECIAL = r"^(?:NaN|[+-]?Infinity|[+-]?inf)$"
_DATE_TEXT = r"^[0-9]{4,}-[0-9]{2}-[0-9]{2}$"
_TIME_TEXT = r"^-?[0-9]{2,3}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?$"
_DATETIME_TEXT = r"^[0-9]{4,}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?: \S+)?$"
_INSTANT_TEXT = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z$"
_LOCAL_TIMESTAMP_TEXT = (
    r"^([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.([0-9]{1,9}))?([+-][0-9]{2}:?[0-9]{2})?$"
)
_BASE64_TEXT = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
BINARY_ENCODINGS = ("base64", "base16", "latin1")


def local_to_instant_text(value: Column, timezone: str) -> Column:
    """Canonical TIMESTAMP text of `YYYY-MM-DD HH:MM:SS[.f][+hh:mm]`: its own offset, else `timezone`.

    Zone shifts are whole seconds, so the fraction digits are carried over as written.
    """
    day = F.regexp_extract(value, _LOCAL_TIMESTAMP_TEXT, 1)
    clock = F.regexp_extract(value, _LOCAL_TIMESTAMP_TEXT, 2)
    frac = F.regexp_extract(value, _LOCAL_TIMESTAMP_TEXT, 3)
    offset = F.regexp_extract(value, _LOCAL_TIMESTAMP_TEXT, 4)
    wall = F.try_to_timestamp(F.concat(day, F.lit(" "), clock), F.lit("yyyy-MM-dd HH:mm:ss"))
    zone = F.when(offset != "", F.regexp_replace(offset, r"^([+-][0-9]{2})([0-9]{2})$", "$1:$2")).otherwise(
        F.lit(timezone)
    )
    utc = F.to_utc_timestamp(wall, zone)
    dot = F.when(frac != "", F.concat(F.lit("."), frac)).otherwise(F.lit(""))
    return F.when(wall.isNotNull(), F.concat(F.date_format(utc, "yyyy-MM-dd'T'HH:mm:ss"), dot, F.lit("Z")))


def latin1_to_base64(value: Column) -> Column:
    """Base64 of text that carries bytes one per character (open-source canal); null if it cannot."""
    # checked first: `encode` raises (not nulls) on a character beyond U+00FF
    latin1 = value.rlike("^[\\x{0}-\\x{FF}]*$")
    return F.when(latin1, F.regexp_replace(F.base64(F.encode(value, "ISO-8859-1")), "[\\r\\n]", ""))


def normalise_value(
    value: Column,
    logical: Column,
    *,
    binary: str = "base64",
    temporal_unit: Column | None = None,
    timezone: str = "UTC",
) -> Column:
    """Canonical text of one image value of the given logical type, or null when it does not fit.

    `binary` is how the format writes BYTES (`base64` kept, `base16` and `latin1` re-encoded);
    `temporal_unit` is the integer unit of temporal values (`days`, `ms`, `us`, `ns`) for formats
    that write dates and times as counts (for a TIMESTAMP epoch: its fixed unit, not its digit
    count); `timezone` is the zone of TIMESTAMP text without offset.
    A value that does not look like its type gives null, which the decoder turns into a reject.
    """
    out = F.when(value.isNull(), F.lit(None))
    if temporal_unit is not None:
        out = out.when(
            logical.isin("DATE", "TIME", "DATETIME") & value.rlike(_INTEGER_TEXT) & temporal_unit.isNotNull(),
            integer_to_temporal_text(value, logical, temporal_unit),
        )
    bytes_text = {
        "base64": F.when(value.rlike(_BASE64_TEXT), value),
        "base16": base16_to_base64(value),
        "latin1": latin1_to_base64(value),
    }[binary]
    return (
        out.when(
            logical == "BOOLEAN",
            F.when(F.lower(value).isin("1", "true"), "true").when(F.lower(value).isin("0", "false"), "false"),
        )
        .when(logical == "INT", F.when(value.rlike(_INTEGER_TEXT.replace("-?", "[+-]?")), value))
        .when(logical == "DECIMAL", F.when(value.rlike(_DECIMAL_TEXT), value))
        .when(logical.isin("FLOAT", "DOUBLE"), F.when(value.rlike(_DECIMAL_TEXT) | value.rlike(_FLOAT_SPECIAL), value))
        .when(logical == "DATE", F.when(value.rlike(_DATE_TEXT), value))
        .when(logical == "TIME", F.when(value.rlike(_TIME_TEXT), value))
        .when(logical == "DATETIME", F.when(value.rlike(_DATETIME_TEXT), value))
        .when(
            logical == "TIMESTAMP",
            F.when(value.rlike(_EPOCH_TEXT), epoch_to_instant_text(value, temporal_unit))
            .when(value.rlike(_INSTANT_TEXT), value)
            .when(value.rlike(_LOCAL_TIMESTAMP_TEXT), local_to_instant_text(value, timezone)),
        )
        .when(logical == "BYTES", bytes_text)
        .otherwise(value)
    )


def normalise_image(image: Column, types: Column, **kwargs) -> Column:
    """Apply `normalise_value` to every value of an image map, looking its type up in `types`.

    Lambdas run interpreted, without common subexpressions: the type (and unit) is looked up once
    per value into a struct, not once per branch of `normalise_value`.
    """
    units = kwargs.pop("temporal_units", None)
    typed = F.transform_values(
        image,
        lambda k, v: F.struct(
            v.alias("v"),
            F.coalesce(F.element_at(types, k), F.lit("UNKNOWN")).alias("t"),
            (F.lit(None).cast("string") if units is None else F.element_at(units, k)).alias("u"),
        ),
    )
    return F.transform_values(
        typed,
        lambda _k, s: normalise_value(s["v"], s["t"], temporal_unit=None if units is None else s["u"], **kwargs),
    )


def invalid_columns(raw: Column, normalised: Column) -> Column:
    """Names of the columns whose raw value was not null but could not be normalised."""
    return F.map_keys(F.map_filter(normalised, lambda k, v: v.isNull() & F.element_at(raw, k).isNotNull()))


def event_id(
    source_format: Column, source_topic: Column, source_file: Column, source_line: Column, row: Column
) -> Column:
    """Deterministic event id: the same message in the same file gives the same id on every run."""
    key = F.concat_ws(
        "\u0001", source_format, source_topic, source_file, source_line.cast("string"), row.cast("string")
    )
    return F.substring(F.sha2(key, 256), 1, 32)
