"""Volume per hour and replication lag per topic, as each engine counts them, and the topics that stand out."""

from __future__ import annotations

import datetime as dt

from cdc_pipelines.quality.activity import TopicLag, longest_quiet_run, topic_flags
from cdc_pipelines.quality.charts import FLAG_COLOUR, OP_COLOURS, activity_charts
from tests.quality.rows import event

DAY = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _at(hour: int, lag_s: float, topic: str, op: str = "INSERT") -> dict:
    at = DAY + dt.timedelta(hours=hour, minutes=5)
    return event(source_topic=topic, op=op, event_time=at, sync_time=at + dt.timedelta(seconds=lag_s))


def _rows() -> list[dict]:
    # steady: one event every hour, 0.5 s lag; gappy: hours 0-5 and 18-23 only, then a 2 h lag spike;
    # late: an event of the previous day and one without sync time
    steady = [_at(h, 0.5, "steady", "UPDATE" if h % 2 else "INSERT") for h in range(24)]
    gappy = [_at(h, 0.02, "gappy") for h in (*range(6), *range(18, 24))] + [_at(23, 7200.0, "gappy", "DELETE")]
    late = [
        event(source_topic="late", event_time=DAY - dt.timedelta(hours=1), sync_time=DAY),
        event(source_topic="late", event_time=DAY + dt.timedelta(hours=3), sync_time=None),
    ]
    return steady + gappy + late


def test_hourly_volume_lag_quantiles_and_flags(judged_day):
    activity = judged_day(_rows()).activity
    assert activity.hourly["steady"][1] == {"UPDATE": 1} and activity.hourly["steady"][2] == {"INSERT": 1}
    assert activity.hourly["gappy"][23] == {"INSERT": 1, "DELETE": 1} and activity.hourly["gappy"][9] == {}
    assert activity.hourly["late"][3] == {"INSERT": 1} and activity.outside_day == {"late": 1}

    steady, gappy, late = (activity.lag[t] for t in ("steady", "gappy", "late"))
    assert (steady.events, steady.p50, steady.p99, steady.max) == (24, 0.5, 0.5, 0.5)
    assert steady.histogram["1e-1s"] == 24 and sum(steady.histogram.values()) == 24
    assert gappy.events == 13 and gappy.p50 == 0.02 and gappy.max == 7200.0
    assert gappy.histogram["1e-2s"] == 12 and gappy.histogram["1e3s"] == 1
    assert (late.events, late.max, late.histogram["1e3s"]) == (1, 3600.0, 1)  # 1 h lag, the other has no sync

    assert activity.flags == {
        "gappy": ["no events for 12 consecutive hours", "lag jumps to 7200.0 s (median 0.020 s)"],
    }  # late is quiet for 20 hours too, but with one event a day that is its normal
    assert set(activity.to_dict()["hourly"]["gappy"]) == {str(h) for h in range(24)}


def test_flag_rules_at_their_edges():
    hours = {h: ({"INSERT": 10} if h not in (4, 5) else {}) for h in range(24)}
    assert longest_quiet_run(hours) == 2 and topic_flags(hours, None) == []
    hours[6] = {}
    assert topic_flags(hours, None) == ["no events for 3 consecutive hours"]
    sparse = {h: ({"INSERT": 1} if h not in (4, 5, 6) else {}) for h in range(24)}
    assert topic_flags(sparse, None) == []  # 21 events a day: 3 empty hours are no news
    spike = TopicLag(events=9, p50=0.5, p95=0.5, p99=80.0, max=80.0, negative=0, histogram={})
    assert topic_flags(None, spike) == ["lag jumps to 80.0 s (median 0.500 s)"]
    assert topic_flags(None, TopicLag(9, 0.5, 0.5, 50.0, 59.0, 0, {})) == []  # under a minute
    assert topic_flags(None, TopicLag(9, 10.0, 10.0, 90.0, 90.0, 0, {})) == []  # under 10x the median
    assert topic_flags({h: {} for h in range(24)}, None) == []  # a topic quiet all day is in no hourly chart


def test_charts_are_inline_svg_with_flagged_topics_first(judged_day):
    activity = judged_day(_rows()).activity
    charts = activity_charts(activity)
    assert [topic for topic, _, _ in charts] == ["gappy", "late", "steady"]  # flagged first
    topic, hourly, lag = charts[0]
    assert hourly.startswith("<svg") and FLAG_COLOUR in hourly and OP_COLOURS["DELETE"] in hourly
    assert "p50 20 ms" in lag and "max 2.0 h" in lag and "(jumps)" in lag and "no events for 12" in hourly
    _, steady_hourly, _ = charts[2]
    assert FLAG_COLOUR not in steady_hourly and "<script" not in steady_hourly + hourly + lag
