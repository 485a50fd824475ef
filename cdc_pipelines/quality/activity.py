"""How volume and replication lag moved through one day: the figures behind the report's pictures.

Counted from the day's events batch by batch (`Volume`: events per topic, table, op and hour, which also
gives the report's event counts; each topic's lags, for exact quantiles and a log-scale histogram), so an
engine adds up what its batches counted. The flags name what an operator looks for first: a
topic whose volume drops to zero for hours, and one whose lag jumps far above its usual.
"""

from __future__ import annotations

import datetime as dt
import math
from bisect import bisect_left
from dataclasses import asdict, dataclass, field
from typing import Any

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
        hourly = {t: {int(h): ops for h, ops in hours.items()} for t, hours in data["hourly"].items()}
        return cls(**data | {"hourly": hourly, "lag": {t: TopicLag(**lag) for t, lag in data["lag"].items()}})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "hourly": {t: {str(h): ops for h, ops in hours.items()} for t, hours in self.hourly.items()}
        }


_DAY_US, _HOUR_US = 86_400_000_000, 3_600_000_000


@dataclass
class Volume:
    """Events by (source_topic, table, op, hour of the day in UTC; None for an event without a time or with
    one on another day), and each topic's lags (`sync_time - event_time`, seconds, microsecond exact) of
    the events carrying both times: what merges across batches."""

    counts: dict[tuple, int] = field(default_factory=dict)
    lags: dict[str, list[float]] = field(default_factory=dict)

    def add(self, events, dt_value: str) -> Volume:
        """Count `events` (dicts with their `table` label, times as epoch microseconds) of the day `dt_value`."""
        day = (dt.date.fromisoformat(dt_value) - dt.date(1970, 1, 1)).days
        counts, lags = self.counts, self.lags
        for e in events:
            event_us, sync_us = e["event_time"], e["sync_time"]
            hour = event_us // _HOUR_US % 24 if event_us is not None and event_us // _DAY_US == day else None
            key = (e["source_topic"], e["table"], e["op"], hour)
            counts[key] = counts.get(key, 0) + 1
            if event_us is not None and sync_us is not None:
                lags.setdefault(e["source_topic"], []).append((sync_us - event_us) / 1_000_000.0)
        return self

    def merge(self, other: Volume) -> Volume:
        for key, n in other.counts.items():
            self.counts[key] = self.counts.get(key, 0) + n
        for topic, lags in other.lags.items():
            self.lags.setdefault(topic, []).extend(lags)
        return self

    def rows(self) -> list[dict]:
        """{source_topic, table, op, hour, count} per group, in `volume_order`."""
        rows = [{"source_topic": t, "table": table, "op": op, "hour": h, "count": n}
                for (t, table, op, h), n in self.counts.items()]  # fmt: skip
        return sorted(rows, key=volume_order)


def volume_order(row) -> tuple:
    """The order `Volume.rows` are given in (topic, table, op, hour; nulls first), so the summary's
    ops come in the same order from every run."""
    return tuple((row[c] is not None, row[c]) for c in ("source_topic", "table", "op", "hour"))


def event_counts_of(volume_rows: list[dict]) -> list[dict]:
    """Events by source_topic, table and op (for the report), from `Volume.rows`."""
    out: dict[tuple[str, str], dict] = {}
    for r in volume_rows:
        topic, table = r["source_topic"], r["table"]
        entry = out.setdefault((topic, table), {"source_topic": topic, "table": table, "ops": {}})
        entry["ops"][r["op"]] = entry["ops"].get(r["op"], 0) + r["count"]
    return [out[k] for k in sorted(out, key=lambda k: tuple((v is not None, v) for v in k))]


def lag_decade(lag: float) -> float:
    """A lag's histogram bucket: the decade floor(log10(lag)) clamped to LAG_BUCKETS, -inf for `<=0`. It
    never falls as the lag grows, so a sorted day's buckets are counted by bisection, not lag by lag."""
    if lag <= 0:
        return -math.inf
    return min(max(math.floor(math.log10(lag)), LAG_BUCKETS[0]), LAG_BUCKETS[-1])


def _percentile(ordered: list[float], fraction: float) -> float:
    """The exact percentile of sorted values: linear interpolation between the two ranks around
    (n - 1) * fraction (as Spark's `percentile` and numpy's default compute it)."""
    position = (len(ordered) - 1) * fraction
    lower, higher = math.floor(position), math.ceil(position)
    low, high = ordered[lower], ordered[higher]
    if higher == lower or low == high:
        return low
    return (higher - position) * low + (position - lower) * high


def lag_figures(lags: dict[str, list[float]]) -> dict[str, TopicLag]:
    """Lag quantiles, maximum, negatives and histogram per topic, from each topic's lags (seconds)."""
    labels = [NON_POSITIVE, *(f"1e{d}s" for d in LAG_BUCKETS)]
    out = {}
    for topic in sorted(lags):
        ordered = sorted(lags[topic])
        starts = [bisect_left(ordered, d, key=lag_decade) for d in (-math.inf, *LAG_BUCKETS)] + [len(ordered)]
        histogram = {label: end - start for label, start, end in zip(labels, starts, starts[1:], strict=False)}
        quantiles = [_percentile(ordered, q) for q in QUANTILES]
        negative = sum(lag < 0 for lag in ordered)
        out[topic] = TopicLag(len(ordered), *quantiles, max=ordered[-1], negative=negative, histogram=histogram)
    return out


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


def activity_of(dt_value: str, volume_rows: list[dict], lag: dict[str, TopicLag]) -> Activity:
    """The day's activity from `Volume.rows` and the topics' lag figures, with the flagged topics: per topic
    {hour: {op: events}} for the 24 hours, and the events outside the day."""
    hourly: dict[str, dict[int, dict[str, int]]] = {}
    outside: dict[str, int] = {}
    for r in volume_rows:
        topic, hour, op = r["source_topic"], r["hour"], r["op"]
        hours = hourly.setdefault(topic, {h: {} for h in range(24)})
        if hour is None:  # no event time, or one on another day
            outside[topic] = outside.get(topic, 0) + r["count"]
        else:
            hours[hour][op] = hours[hour].get(op, 0) + r["count"]
    topics = sorted(set(hourly) | set(lag))
    flags = {t: f for t in topics if (f := topic_flags(hourly.get(t), lag.get(t)))}
    return Activity(
        dt=dt_value, hourly={t: hourly[t] for t in sorted(hourly)}, outside_day=outside, lag=lag, flags=flags
    )
