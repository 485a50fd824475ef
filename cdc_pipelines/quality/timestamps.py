"""Timestamp precision: event times carry the unit their format promises and are plausible, and
temporal image values parse at their declared precision.

A 10-digit epoch where 13 digits are promised shifts events by a factor of 1000, and a DATETIME
with a stray zone or a 7th fraction digit breaks every downstream cast; both pass decoding quietly.
"""

from __future__ import annotations

import datetime as dt
import re

from cdc_pipelines.formats import codec_of
from cdc_pipelines.model.canonical import TOMBSTONE
from cdc_pipelines.quality.partition import Thresholds
from cdc_pipelines.quality.result import EventRule, Verdict

RULE = "timestamp_precision_check"
OLDEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)

_FRACTION = r"(?:\.([0-9]{1,9}))?"
_DAY = r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
_CLOCK = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
PATTERNS = {
    "DATE": re.compile(rf"^{_DAY}$"),
    # MySQL TIME is a duration (-838:59:59 .. 838:59:59), so TIME allows a sign and three hour digits
    "TIME": re.compile(rf"^-?(?:[0-9]{{2}}|[0-8][0-9]{{2}}):[0-5][0-9]:[0-5][0-9]{_FRACTION}$"),
    "DATETIME": re.compile(rf"^{_DAY} {_CLOCK}{_FRACTION}$"),
    "TIMESTAMP": re.compile(rf"^{_DAY}T{_CLOCK}{_FRACTION}Z$"),
}


_MICROSECOND = dt.timedelta(microseconds=1)


def _micros(moment: dt.datetime) -> int:
    """Epoch microseconds of a moment; a naive datetime is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return (moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // _MICROSECOND


_FRACTION_DIGITS = re.compile(r"\.([0-9]+)Z?$")
_DECLARED = re.compile(r"\(([0-9])\)")
_EPOCH = dt.datetime(1970, 1, 1)


def bad_value(value: str | None, logical: str, source_type: str | None) -> bool:
    """Whether a non-null value of a temporal type is not in its canonical form (the whole text matches its
    pattern, the day is real), or has more fraction digits than its declared `(n)` precision."""
    if value is None:
        return False
    if not PATTERNS[logical].fullmatch(value):
        return True
    if logical in ("DATE", "DATETIME", "TIMESTAMP"):
        try:  # a day of the calendar (years 1-9999: `0000-00-00` is MySQL's zero date)
            dt.date(int(value[0:4]), int(value[5:7]), int(value[8:10]))
        except ValueError:
            return True
    if "." not in value:
        return False
    declared = _DECLARED.search(source_type or "")
    if declared is None:
        return False
    fraction = _FRACTION_DIGITS.search(value)
    return len(fraction.group(1) if fraction else "") > int(declared.group(1))


def temporal_values(event) -> tuple[bool, str]:
    """Whether an image holds a column `column_types` calls temporal, and the values that do not parse
    (`after.col1,...`, empty when none)."""
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
        bad += [f"{image}.{k}" for k in temporal if bad_value(values.get(k), types[k], sources.get(k))]
    return has, ",".join(bad)


def utc_text(micros: int) -> str:
    """An instant as `YYYY-MM-DDTHH:MM:SSZ`, or as its microseconds where it falls outside years 1-9999."""
    try:
        moment = _EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        return f"{micros} us after 1970-01-01"
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}Z"


def timestamp_rule(thresholds: Thresholds) -> EventRule:
    """Sub-checks: event_time present, its unit as promised, within [2000-01-01, now + tolerance];
    DATE/TIME/DATETIME/TIMESTAMP image values in canonical form (and within a declared `(n)` precision);
    sync_time not before event_time by more than the tolerance. Times are epoch microseconds, so neither
    a session's nor the machine's time zone matters."""
    latest = _micros((thresholds.now or dt.datetime.now(dt.UTC)) + thresholds.future_tolerance)
    oldest, tolerance = _micros(OLDEST), thresholds.sync_tolerance // _MICROSECOND

    def verdicts(event) -> tuple[list[Verdict], tuple]:
        fmt, event_us, sync_us, unit = (event["source_format"], event["event_time"], event["sync_time"],
                                        event["event_time_unit"])  # fmt: skip
        timed = event_us is not None
        codec = codec_of(fmt)
        promised = None if codec is None else codec.event_time_unit
        required = codec is None or codec.event_time_required
        tombstone = event["op"] == "OTHER" and event["raw_op"] == TOMBSTONE
        range_fails = timed and (event_us > latest or event_us < oldest)
        has_temporal, bad = temporal_values(event)
        return [
            (required and not tombstone, not timed, "event_time missing"),
            (timed and promised is not None, unit != promised,
             f"event_time unit {'null' if unit is None else unit}, format promises {promised}"),
            (timed, range_fails, range_fails and "event_time " + utc_text(event_us)
             + (" is in the future" if event_us > latest else " is before 2000-01-01")),
            (has_temporal, bad != "", f"temporal value does not parse at its precision: {bad}"),
            (timed and sync_us is not None, timed and sync_us is not None and sync_us < event_us - tolerance,
             "sync_time before event_time"),
        ], ()  # fmt: skip

    checks = ("event_time_present", "event_time_unit", "event_time_range", "temporal_values", "sync_after_event")
    return EventRule(RULE, checks, (), verdicts, threshold=thresholds.max_failure_ratio)
