"""Timestamp precision: event times carry the unit their format promises and are plausible, and
temporal image values parse at their declared precision.

A 10-digit epoch where 13 digits are promised shifts events by a factor of 1000, and a DATETIME
with a stray zone or a 7th fraction digit breaks every downstream cast; both pass decoding quietly.
"""

from __future__ import annotations

import datetime as dt
import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.model.canonical import TOMBSTONE
from cdc_pipelines.model.schema import lit_map
from cdc_pipelines.quality.partition import Thresholds
from cdc_pipelines.quality.result import EventJudge, EventRule, NeedsSpark, RuleResult, SubCheck, Verdict, evaluate

RULE = "timestamp_precision_check"
PROMISED_UNIT = {
    **dict.fromkeys(["oms-default", "oms-default-extend", "oms-shareplex", "dts-shareplex", "dts-avro"], "s"),
    **dict.fromkeys(
        [
            "oms-canal",
            "dts-canal",
            "oms-dataworks",
            "dataworks-json",
            "datahub-tuple",
            "oms-debezium",
            "oms-debezium-flatten",
            "oms-debezium-smt",
        ],
        "ms",
    ),
    "maxwell-json": "s",  # `ts`, epoch seconds
    **dict.fromkeys(["ogg-json", "aws-dms-json"], "us"),  # date-time text with six fraction digits
}
# DebeziumSmt flattens the after-image only: its messages carry no event time at all.
NO_EVENT_TIME = ("oms-debezium-smt",)
OLDEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
TEMPORAL, HAS_TEMPORAL, BAD_VALUES = "_ts_temporal", "_ts_has_temporal", "_ts_bad_values"

_FRACTION = r"(?:\.([0-9]{1,9}))?"
_DAY = r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
_CLOCK = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
# MySQL TIME is a duration (-838:59:59 .. 838:59:59), so TIME allows a sign and three hour digits.
_TIME_RE = rf"^-?(?:[0-9]{{2}}|[0-8][0-9]{{2}}):[0-5][0-9]:[0-5][0-9]{_FRACTION}$"
PATTERNS = {
    "DATE": rf"^{_DAY}$",
    "TIME": _TIME_RE,
    "DATETIME": rf"^{_DAY} {_CLOCK}{_FRACTION}$",
    "TIMESTAMP": rf"^{_DAY}T{_CLOCK}{_FRACTION}Z$",
}


def _micros(moment: dt.datetime) -> int:
    """Epoch microseconds of a moment; a naive datetime is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return _micros_delta(moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC))


def _micros_delta(delta: dt.timedelta) -> int:
    return (delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds


def _bad_value(value: Column, logical: Column, source_type: Column) -> Column:
    """True when a non-null value of a temporal type does not parse at its type's precision."""
    pattern_ok = F.lit(False)
    for name, pattern in PATTERNS.items():
        pattern_ok = F.when(logical == name, value.rlike(pattern)).otherwise(pattern_ok)
    real_day = F.when(
        logical.isin("DATE", "DATETIME", "TIMESTAMP"),
        F.try_to_date(F.substring(value, 1, 10), "yyyy-MM-dd").isNotNull(),
    ).otherwise(F.lit(True))
    # `datetime(3)` declares at most 3 fraction digits; the declaration is only read for a value with a fraction
    declared = F.regexp_extract(F.coalesce(source_type, F.lit("")), r"\(([0-9])\)", 1)
    fraction = F.length(F.regexp_extract(value, r"\.([0-9]+)Z?$", 1))
    within = (
        F.when(F.instr(value, ".") == 0, F.lit(True))
        .when(declared == "", F.lit(True))
        .otherwise(fraction <= declared.cast("int"))
    )
    return logical.isin(*PATTERNS) & value.isNotNull() & ~(pattern_ok & real_day & within)


def _temporal_columns() -> Column:
    """The event's columns of a temporal type, from its `column_types`: the few keys the image checks
    look up, instead of a type lookup (a scan of the types map) for every value of both images. An
    event without any (a plain array test) gets an empty array without running the lambda."""
    empty = F.array().cast("array<string>")
    any_temporal = F.arrays_overlap(F.map_values("column_types"), F.array(*[F.lit(t) for t in PATTERNS]))
    keys = F.map_keys(F.map_filter(F.col("column_types"), lambda k, v: v.isin(*PATTERNS)))
    return F.when(F.coalesce(any_temporal, F.lit(False)), keys).otherwise(empty)


def _bad_columns(image: str, temporal: Column) -> Column:
    """[`after.col1`, ...]: the temporal values in `image` that do not parse (empty when none)."""
    img = F.col(image)
    bad = F.filter(
        temporal,
        lambda k: F.coalesce(
            _bad_value(F.element_at(img, k), F.element_at("column_types", k), F.element_at("source_types", k)),
            F.lit(False),
        ),
    )
    keys = F.transform(bad, lambda k: F.concat(F.lit(image + "."), k))
    return F.coalesce(keys, F.array().cast("array<string>"))


def _has_temporal(image: str, temporal: Column) -> Column:
    return F.coalesce(F.exists(temporal, lambda k: F.map_contains_key(F.col(image), k)), F.lit(False))


def temporal_columns(events: DataFrame) -> DataFrame:
    """`events` with what the temporal sub-check reads, computed once per event: whether an image holds a
    temporal column, and the image values that do not parse (`after.col1,...`, empty when none). Both
    run lambdas over the images, which Spark evaluates without generated code."""
    temporal = F.col(TEMPORAL)
    return (
        events.withColumn(TEMPORAL, _temporal_columns())
        .withColumns(
            {
                HAS_TEMPORAL: _has_temporal("before", temporal) | _has_temporal("after", temporal),
                BAD_VALUES: F.array_join(
                    F.concat(_bad_columns("before", temporal), _bad_columns("after", temporal)), ","
                ),
            }
        )
        .drop(TEMPORAL)
    )


def _tombstone() -> Column:
    """A Kafka tombstone's event: it changes nothing, so it has no event time (see `extracts.rows`)."""
    return (F.col("op") == "OTHER") & F.coalesce(F.col("raw_op") == TOMBSTONE, F.lit(False))


def timestamp_checks(
    *,
    now: dt.datetime | None = None,
    future_tolerance: dt.timedelta = dt.timedelta(minutes=5),
    sync_tolerance: dt.timedelta = dt.timedelta(minutes=5),
) -> dict[str, SubCheck]:
    """Sub-checks: event_time present, its unit as promised, within [2000-01-01, now + tolerance];
    DATE/TIME/DATETIME/TIMESTAMP image values in canonical form (and within a declared `(n)`
    precision); sync_time not before event_time by more than `sync_tolerance`.

    Times are compared as epoch microseconds, so neither the session nor the machine time zone matters.
    """
    now = now or dt.datetime.now(dt.UTC)
    event_time, unit = F.col("event_time"), F.col("event_time_unit")
    event_us = F.unix_micros(event_time)
    promised = F.element_at(lit_map(PROMISED_UNIT), F.col("source_format"))
    bad = F.col(BAD_VALUES)
    latest = F.lit(_micros(now + future_tolerance))
    in_future = event_us > latest
    checks = {
        "event_time_present": SubCheck(
            ~F.col("source_format").isin(*NO_EVENT_TIME) & ~_tombstone(),
            event_time.isNull(),
            F.lit("event_time missing"),
        ),
        "event_time_unit": SubCheck(
            event_time.isNotNull() & promised.isNotNull(),
            ~F.coalesce(unit == promised, F.lit(False)),
            F.format_string("event_time unit %s, format promises %s", F.coalesce(unit, F.lit("null")), promised),
        ),
        "event_time_range": SubCheck(
            event_time.isNotNull(),
            in_future | (event_us < F.lit(_micros(OLDEST))),
            F.concat(
                F.lit("event_time "),
                F.date_format(event_time, "yyyy-MM-dd'T'HH:mm:ss'Z'"),
                F.when(in_future, F.lit(" is in the future")).otherwise(F.lit(" is before 2000-01-01")),
            ),
        ),
        "temporal_values": SubCheck(
            F.col(HAS_TEMPORAL),
            bad != "",
            F.concat(F.lit("temporal value does not parse at its precision: "), bad),
        ),
        "sync_after_event": SubCheck(
            event_time.isNotNull() & F.col("sync_time").isNotNull(),
            F.unix_micros(F.col("sync_time")) < event_us - F.lit(_micros_delta(sync_tolerance)),
            F.lit("sync_time before event_time"),
        ),
    }
    return checks


def timestamp_rule(
    *,
    max_failure_ratio: float = 0.0,
    now: dt.datetime | None = None,
    future_tolerance: dt.timedelta = dt.timedelta(minutes=5),
    sync_tolerance: dt.timedelta = dt.timedelta(minutes=5),
) -> EventRule:
    """The rule as the day's scan takes it (see `scan`)."""
    checks = timestamp_checks(now=now, future_tolerance=future_tolerance, sync_tolerance=sync_tolerance)
    return EventRule(RULE, checks, threshold=max_failure_ratio, added_columns=temporal_columns)


# Java's `$` (what `rlike` and `regexp_extract` run) also matches before one line terminator at the end
_JAVA_END = r"(?=(?:\r\n|[\r\u0085\u2028\u2029]|(?<!\r)\n)?\Z)"


def _java(pattern: str) -> re.Pattern:
    return re.compile(pattern[:-1] + _JAVA_END if pattern.endswith("$") else pattern)


_PY_PATTERNS = {name: _java(p) for name, p in PATTERNS.items()}
_PY_FRACTION = _java(r"\.([0-9]+)Z?$")
_PY_DECLARED = re.compile(r"\(([0-9])\)")
_EPOCH = dt.datetime(1970, 1, 1)


def _real_day(text: str) -> bool:
    """`try_to_date(text, "yyyy-MM-dd")` is not null (Spark reads `yyyy` as the proleptic year: 0000 is one)."""
    try:
        year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
        dt.date(year or 2000, month, day)  # year 0 is a leap year, as 2000 is
    except ValueError:
        return False
    return True


def _bad_py_value(value: str | None, logical: str, source_type: str | None) -> bool:
    """`_bad_value` in Python."""
    if value is None:
        return False
    if not _PY_PATTERNS[logical].search(value):
        return True
    if logical in ("DATE", "DATETIME", "TIMESTAMP") and not _real_day(value[:10]):
        return True
    if "." not in value:
        return False
    declared = _PY_DECLARED.search(source_type or "")
    if declared is None:
        return False
    fraction = _PY_FRACTION.search(value)
    return len(fraction.group(1) if fraction else "") > int(declared.group(1))


def _py_temporal(event) -> tuple[bool, str]:
    """`temporal_columns` of one event: whether an image holds a temporal column, the values that do not parse."""
    types = event["column_types"] or {}
    temporal = [k for k, v in types.items() if v in PATTERNS]
    if not temporal:
        return False, ""
    sources = event["source_types"] or {}
    has, bad = False, []
    for image in ("before", "after"):
        values = event[image]
        if values is None:
            continue
        has = has or any(k in values for k in temporal)
        bad += [f"{image}.{k}" for k in temporal if _bad_py_value(values.get(k), types[k], sources.get(k))]
    return has, ",".join(bad)


def _utc_text(micros: int) -> str:
    """`date_format(t, "yyyy-MM-dd'T'HH:mm:ss'Z'")` in UTC; Python holds years 1-9999 only."""
    try:
        moment = _EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        raise NeedsSpark(f"event time {micros} us is outside years 1-9999") from None
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}Z"


def timestamp_judge(thresholds: Thresholds) -> EventJudge:
    """`timestamp_checks` judged in Python (see `result.EventJudge`); event times as epoch microseconds."""
    latest = _micros((thresholds.now or dt.datetime.now(dt.UTC)) + thresholds.future_tolerance)
    oldest, tolerance = _micros(OLDEST), _micros_delta(thresholds.sync_tolerance)

    def verdicts(event) -> tuple[list[Verdict], tuple]:
        fmt, event_us, sync_us, unit = (event["source_format"], event["event_time"], event["sync_time"],
                                        event["event_time_unit"])  # fmt: skip
        timed = event_us is not None
        promised = PROMISED_UNIT.get(fmt)
        tombstone = event["op"] == "OTHER" and event["raw_op"] == TOMBSTONE
        range_fails = timed and (event_us > latest or event_us < oldest)
        has_temporal, bad = _py_temporal(event)
        return [
            (fmt not in NO_EVENT_TIME and not tombstone, not timed, "event_time missing"),
            (timed and promised is not None, unit != promised,
             f"event_time unit {'null' if unit is None else unit}, format promises {promised}"),
            (timed, range_fails, range_fails and "event_time " + _utc_text(event_us)
             + (" is in the future" if event_us > latest else " is before 2000-01-01")),
            (has_temporal, bad != "", f"temporal value does not parse at its precision: {bad}"),
            (timed and sync_us is not None, timed and sync_us is not None and sync_us < event_us - tolerance,
             "sync_time before event_time"),
        ], ()  # fmt: skip

    checks = ("event_time_present", "event_time_unit", "event_time_range", "temporal_values", "sync_after_event")
    return EventJudge(RULE, checks, (), verdicts, threshold=thresholds.max_failure_ratio)


def timestamp_precision_check(
    df: DataFrame,
    *,
    max_failure_ratio: float = 0.0,
    now: dt.datetime | None = None,
    future_tolerance: dt.timedelta = dt.timedelta(minutes=5),
    sync_tolerance: dt.timedelta = dt.timedelta(minutes=5),
) -> RuleResult:
    """The timestamp sub-checks counted over `df` by topic and table (a scan of its own)."""
    rule = timestamp_rule(
        max_failure_ratio=max_failure_ratio, now=now, future_tolerance=future_tolerance, sync_tolerance=sync_tolerance
    )
    return evaluate(df, rule)
