"""How volume and replication lag moved through one day: the figures behind the report's pictures.

Two Spark aggregates over the day's scan (events per topic, table, op and hour, which also gives the
report's event counts; lag quantiles and a log-scale histogram per topic), and only those small
results reach the driver. The flags name what an operator looks for first: a
topic whose volume drops to zero for hours, and one whose lag jumps far above its usual.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

QUIET_HOURS = 3  # this many consecutive hours without events flags a topic ...
QUIET_EXPECTED = 5.0  # ... whose day's average would have put at least this many events in them
LAG_JUMP_FACTOR = 10.0  # max lag at least this many times the median ...
LAG_JUMP_FLOOR_S = 60.0  # ... and at least this many seconds flags a topic
# log10 decades of lag in seconds: -3 is 1-10 ms ... 4 is 10^4 s (2.8 h) and more; -4 is under 1 ms
LAG_BUCKETS = tuple(range(-4, 5))
NON_POSITIVE = "<=0"
QUANTILES = (0.5, 0.95, 0.99)


@dataclass
class TopicLag:
    """Replication lag (`sync_time - event_time`, seconds) of one topic's events that carry both times."""

    events: int
    p50: float | None
    p95: float | None
    p99: float | None
    max: float | None
    negative: int
    histogram: dict[str, int]


@dataclass
class Activity:
    """Events per topic by hour (0-23, UTC) and op, lag per topic, and the topics that stand out and why."""

    dt: str
    hourly: dict[str, dict[int, dict[str, int]]]
    outside_day: dict[str, int]
    lag: dict[str, TopicLag]
    flags: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Activity:
        """The figures `to_dict` gave (hours back to numbers)."""
        return cls(
            dt=data["dt"],
            hourly={t: {int(h): ops for h, ops in hours.items()} for t, hours in data["hourly"].items()},
            outside_day=data["outside_day"],
            lag={t: TopicLag(**lag) for t, lag in data["lag"].items()},
            flags=data["flags"],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "dt": self.dt,
            "hourly": {t: {str(h): ops for h, ops in hours.items()} for t, hours in self.hourly.items()},
            "outside_day": self.outside_day,
            "lag": {t: asdict(lag) for t, lag in self.lag.items()},
            "flags": self.flags,
        }


def lag_seconds() -> Column:
    """sync_time - event_time in seconds, microsecond exact; null where either time is missing."""
    return (F.unix_micros("sync_time") - F.unix_micros("event_time")) / F.lit(1_000_000.0)


def bucket_label(decade: int) -> str:
    return f"1e{decade}s"


def lag_bucket() -> Column:
    """The histogram bucket of a lag: `<=0`, or the decade floor(log10(lag)) clamped to LAG_BUCKETS."""
    lag = lag_seconds()
    decade = F.least(F.greatest(F.floor(F.log10(lag)), F.lit(LAG_BUCKETS[0])), F.lit(LAG_BUCKETS[-1]))
    return F.when(lag <= 0, F.lit(NON_POSITIVE)).otherwise(F.concat(F.lit("1e"), decade.cast("string"), F.lit("s")))


def event_columns(dt_value: str) -> list[Column]:
    """The scan's per-event columns these figures count: hour of the day (null when the event has no
    time or one on another day), lag and its histogram bucket (null without both times)."""
    in_day = F.to_date("event_time") == F.lit(dt.date.fromisoformat(dt_value))
    return [
        F.when(in_day, F.hour("event_time")).alias("hour"),
        lag_seconds().alias("lag"),
        lag_bucket().alias("lag_bucket"),
    ]


def volume(events: DataFrame) -> list:
    """Events by (source_topic, table, op, hour): the one aggregate behind the hourly pictures and the
    report's event counts (one Spark job)."""
    return sorted(events.groupBy("source_topic", "table", "op", "hour").count().collect(), key=volume_order)


def volume_order(row) -> tuple:
    """The order `volume`'s rows are given in (topic, table, op, hour; nulls first), so the summary's
    ops come in the same order from every run."""
    return tuple((row[c] is not None, row[c]) for c in ("source_topic", "table", "op", "hour"))


def hourly_from(volume_rows: list) -> tuple[dict, dict]:
    """Per topic {hour: {op: events}} for the 24 hours, and the events outside the day per topic."""
    hourly: dict[str, dict[int, dict[str, int]]] = {}
    outside: dict[str, int] = {}
    for r in volume_rows:
        hours = hourly.setdefault(r.source_topic, {h: {} for h in range(24)})
        if r.hour is None:  # no event time, or one on another day
            outside[r.source_topic] = outside.get(r.source_topic, 0) + r["count"]
        else:
            hours[r.hour][r.op] = hours[r.hour].get(r.op, 0) + r["count"]
    return hourly, outside


def event_counts_of(volume_rows: list) -> list[dict]:
    """Events by source_topic, table and op (for the report), from `volume`'s rows."""
    out: dict[tuple[str, str], dict] = {}
    for r in volume_rows:
        entry = out.setdefault((r.source_topic, r.table), {"source_topic": r.source_topic, "table": r.table, "ops": {}})
        entry["ops"][r.op] = entry["ops"].get(r.op, 0) + r["count"]
    return [out[k] for k in sorted(out)]


def py_lag_bucket(lag: float) -> str:
    """`lag_bucket` of one lag, in Python."""
    if lag <= 0:
        return NON_POSITIVE
    return bucket_label(min(max(math.floor(math.log10(lag)), LAG_BUCKETS[0]), LAG_BUCKETS[-1]))


def _percentile(ordered: list[float], fraction: float) -> float:
    """Spark's exact `percentile` of sorted values: linear interpolation between the two ranks around
    (n - 1) * fraction, in its order of operations so the digits agree."""
    position = (len(ordered) - 1) * fraction
    lower, higher = math.floor(position), math.ceil(position)
    low, high = ordered[lower], ordered[higher]
    if higher == lower or low == high:
        return low
    return (higher - position) * low + (position - lower) * high


def lag_figures(lags: dict[str, list[float]]) -> dict[str, TopicLag]:
    """`lag_from`'s figures from each topic's lags (seconds), in Python."""
    labels = [NON_POSITIVE, *(bucket_label(d) for d in LAG_BUCKETS)]
    out = {}
    for topic in sorted(lags):
        ordered = sorted(lags[topic])
        histogram = dict.fromkeys(labels, 0)
        for lag in ordered:
            histogram[py_lag_bucket(lag)] += 1
        quantiles = [_percentile(ordered, q) for q in QUANTILES]
        negative = sum(lag < 0 for lag in ordered)
        out[topic] = TopicLag(len(ordered), *quantiles, max=ordered[-1], negative=negative, histogram=histogram)
    return out


def lag_from(events: DataFrame) -> dict[str, TopicLag]:
    """Lag quantiles, maximum, negatives and histogram per topic from the scan's `lag` columns (one job)."""
    labels = [NON_POSITIVE, *(bucket_label(d) for d in LAG_BUCKETS)]
    lag = F.col("lag")
    stats = (
        events.where(lag.isNotNull())
        .groupBy("source_topic")
        .agg(
            F.count("*").alias("events"),
            F.percentile(lag, list(QUANTILES)).alias("q"),
            F.max(lag).alias("max"),
            F.count(F.when(lag < 0, 1)).alias("negative"),
            *[F.count(F.when(F.col("lag_bucket") == b, 1)).alias(f"b{i}") for i, b in enumerate(labels)],
        )
        .collect()
    )
    return {
        r.source_topic: TopicLag(
            events=r.events,
            p50=r.q[0],
            p95=r.q[1],
            p99=r.q[2],
            max=r["max"],
            negative=r.negative,
            histogram={b: r[f"b{i}"] for i, b in enumerate(labels)},
        )
        for r in sorted(stats, key=lambda r: r.source_topic)
    }


def longest_quiet_run(hours: dict[int, dict[str, int]]) -> int:
    """The most consecutive hours of the day without a single event."""
    longest = run = 0
    for h in range(24):
        run = 0 if sum(hours.get(h, {}).values()) else run + 1
        longest = max(longest, run)
    return longest


def topic_flags(hours: dict[int, dict[str, int]] | None, lag: TopicLag | None) -> list[str]:
    """Why a topic stands out (empty when it does not)."""
    flags = []
    total = sum(sum(ops.values()) for ops in (hours or {}).values())
    if total:
        quiet = longest_quiet_run(hours)
        # a topic of a few events a day is quiet for hours as a rule; one that is busy should not be
        if quiet >= QUIET_HOURS and total / 24 * quiet >= QUIET_EXPECTED:
            flags.append(f"no events for {quiet} consecutive hours")
    if lag and lag.max is not None and lag.p50 is not None:
        if lag.max >= LAG_JUMP_FLOOR_S and lag.max >= LAG_JUMP_FACTOR * max(lag.p50, 0.0):
            flags.append(f"lag jumps to {lag.max:.1f} s (median {lag.p50:.3f} s)")
    return flags


def activity_from(events: DataFrame, dt_value: str, volume_rows: list) -> Activity:
    """Hourly volume (from `volume`'s rows) and lag figures of the scan's events, with the flagged topics."""
    return activity_of(dt_value, volume_rows, lag_from(events))


def activity_of(dt_value: str, volume_rows: list, lag: dict[str, TopicLag]) -> Activity:
    """The day's activity from `volume`'s rows and the topics' lag figures, with the flagged topics."""
    hourly, outside = hourly_from(volume_rows)
    topics = sorted(set(hourly) | set(lag))
    flags = {t: f for t in topics if (f := topic_flags(hourly.get(t), lag.get(t)))}
    return Activity(
        dt=dt_value, hourly={t: hourly[t] for t in sorted(hourly)}, outside_day=outside, lag=lag, flags=flags
    )


def day_activity(changes: DataFrame, dt_value: str) -> Activity:
    """Hourly volume and lag figures of one partition's events, with the flagged topics (a scan of its own)."""
    events = changes.select("source_topic", "op", F.lit(None).alias("table"), *event_columns(dt_value))
    return activity_from(events, dt_value, volume(events))
