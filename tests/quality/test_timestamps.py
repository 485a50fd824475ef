"""timestamp_precision_check: promised units, plausible times, canonical temporal text, sync order."""

from __future__ import annotations

import datetime as dt

from cdc_pipelines.quality import Thresholds
from tests.quality.rows import NOW, clean_events, event, failing_rules

RULE = "timestamp_precision_check"


def _at(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.UTC)


def test_seconds_where_millis_are_promised_fail_only_this_rule(judged):
    bad = event(event_time_unit="s")  # oms-canal promises 13-digit millis
    assert failing_rules(judged([*clean_events(), bad])) == {
        "timestamp_precision_check": ["event_time unit s, format promises ms"]
    }


def test_units_per_format(judged):
    rows = [
        event(source_format="oms-default", event_time_unit="s"),
        event(source_format="dts-avro", event_time_unit="ms", event_id="avro-ms"),
        event(source_format="datahub-tuple", event_time_unit="ms"),
        event(source_format="oms-debezium-smt", event_time=None, event_time_unit=None),  # carries no time
        event(source_format="oms-canal", event_time=None, event_time_unit=None, event_id="canal-no-time"),
    ]
    result = judged(rows)[RULE]
    assert [(e["id"], e["reason"]) for e in result.examples] == [
        ("avro-ms", "event_time unit ms, format promises s"),
        ("canal-no-time", "event_time missing"),
    ]
    assert result.checks["event_time_present"] == {"checked": 4, "failed": 1}
    assert result.checks["event_time_unit"] == {"checked": 3, "failed": 1}


def test_event_time_range_and_sync_order(judged):
    rows = [
        event(event_time=_at(2024, 1, 2, 0, 4), sync_time=None),  # within the 5 min future tolerance
        event(event_time=_at(2024, 1, 2, 0, 6), sync_time=None, event_id="future"),
        event(event_time=_at(1999, 12, 31, 23, 59), sync_time=None, event_id="old"),
        event(sync_time=_at(2024, 1, 1, 9, 56)),  # sync 4 min before the event: clock skew, tolerated
        event(sync_time=_at(2024, 1, 1, 9, 54), event_id="sync-early"),
    ]
    result = judged(rows)[RULE]
    assert sorted((e["id"], e["reason"]) for e in result.examples) == [
        ("future", "event_time 2024-01-02T00:06:00Z is in the future"),
        ("old", "event_time 1999-12-31T23:59:00Z is before 2000-01-01"),
        ("sync-early", "sync_time before event_time"),
    ]
    assert result.checks["event_time_range"] == {"checked": 5, "failed": 2}
    assert result.checks["sync_after_event"] == {"checked": 2, "failed": 1}
    wide = judged(rows, thresholds=Thresholds(now=NOW, sync_tolerance=dt.timedelta(minutes=10)))[RULE]
    assert wide.checks["sync_after_event"]["failed"] == 0


def test_temporal_values_parse_at_their_declared_precision(judged):
    types = {"d": "DATE", "t": "TIME", "dt": "DATETIME", "ts": "TIMESTAMP", "s": "STRING"}
    good = {
        "d": "2020-02-29",
        "t": "-838:59:59",  # MySQL TIME is a duration
        "dt": "2020-11-25 00:01:02.123456789",
        "ts": "2020-12-31T16:01:02.012345Z",  # a 31st that exists
        "s": "not a date",
    }
    bad_values = {
        "bad-date": {"d": "2020-02-30"},
        "bad-datetime-day": {"dt": "2021-04-31 00:01:02"},  # April has 30 days
        "bad-time": {"t": "25:61:00"},
        "bad-datetime-t": {"dt": "2020-11-25T00:01:02"},
        "bad-datetime-zone": {"dt": "2020-11-25 00:01:02 Asia/Shanghai"},
        "bad-timestamp-no-z": {"ts": "2020-11-24T16:01:02"},
        "bad-fraction-10": {"dt": "2020-11-25 00:01:02.1234567890"},
        "bad-precision": {"ts": "2020-11-24T16:01:02.0123Z"},  # timestamp(3) declared
    }
    rows = [event(after={**good, "id": "1"}, column_types=types, source_types={})]
    rows += [
        event(event_id=k, after={**good, "id": "1", **v}, column_types=types, source_types=declared)
        for k, v in bad_values.items()
        for declared in [{"ts": "timestamp(3)"} if k == "bad-precision" else {"ts": "timestamp(6)"}]
    ]
    rows.append(event(op="DELETE", after=None, before={"d": "0000-00-00"}, column_types=types, event_id="zero"))
    result = judged(rows)[RULE]
    assert result.checks["temporal_values"] == {"checked": 10, "failed": 9}
    assert (result.checked, result.failed) == (10, 9)
    assert len(result.examples) == 5  # capped
    reasons = {e["id"]: e["reason"] for e in result.examples}
    assert reasons["bad-date"] == "temporal value does not parse at its precision: after.d"
    only_zero = judged(rows[-1:])[RULE]
    assert only_zero.examples[0]["reason"] == "temporal value does not parse at its precision: before.d"
