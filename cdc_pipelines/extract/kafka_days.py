"""A day of a Kafka topic as timestamps: its bounds in a time zone, and whether every partition is past it.

Kafka orders a partition by offset, not by time; a day is read by message timestamps (epoch ms, the
producer's CreateTime or the broker's LogAppendTime), so its bounds are computed once here, in the
catalog's time zone (UTC by default: a day in Shanghai starts at 16:00 UTC the day before). Pure
Python, no Spark: the unit tests check the bounds across daylight-saving changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


class KafkaDayError(ValueError):
    """A day that cannot be read: bad date or zone, or not complete yet."""


@dataclass(frozen=True)
class DayBounds:
    """[start_ms, end_ms) of one day in epoch milliseconds; `late_ms` how far past the end a message of
    the day may still sit in a partition (out of timestamp order), so the read looks that far on."""

    day: str
    zone: str
    start_ms: int
    end_ms: int
    late_ms: int = 0

    @property
    def scan_end_ms(self) -> int:
        """The timestamp whose first offset ends the offsets read (the day's end plus the lateness)."""
        return self.end_ms + self.late_ms

    def clock(self, ms: int) -> str:
        """`ms` as the zone's wall-clock time, `HH:MM` (with the date when it is another day)."""
        local = dt.datetime.fromtimestamp(ms / 1000, ZoneInfo(self.zone))
        return local.strftime("%H:%M") if local.date().isoformat() == self.day else local.strftime("%Y-%m-%d %H:%M")


def day_bounds(day: str, zone: str = "UTC", late_seconds: int = 0) -> DayBounds:
    """The bounds of `day` (YYYY-MM-DD) from its midnight to the next one in `zone` (23 or 25 hours
    long on a daylight-saving change)."""
    try:
        date = dt.date.fromisoformat(day)
    except ValueError:
        raise KafkaDayError(f"not a YYYY-MM-DD date: {day!r}") from None
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise KafkaDayError(f"unknown time zone {zone!r}") from None
    if late_seconds < 0:
        raise KafkaDayError(f"late seconds must be >= 0, got {late_seconds}")
    start = dt.datetime.combine(date, dt.time(), tz)
    end = dt.datetime.combine(date + dt.timedelta(days=1), dt.time(), tz)
    return DayBounds(day, zone, _ms(start), _ms(end), late_seconds * 1000)


def _ms(moment: dt.datetime) -> int:
    return int(moment.timestamp()) * 1000


def incomplete_message(topic: str, bounds: DayBounds, latest: Mapping[int, int | None]) -> str | None:
    """None when every partition holds a message at or past the scan end; else why the day is not
    complete, naming each partition behind it and the time of its newest message (`latest`: partition ->
    newest message timestamp, None for an empty partition)."""
    behind = []
    for partition, ts in sorted(latest.items()):
        if ts is None:
            behind.append(f"partition {partition} is empty")
        elif ts < bounds.scan_end_ms:
            behind.append(f"partition {partition} is at {bounds.clock(ts)}")
    if not behind:
        return None
    past = "its end" if not bounds.late_ms else f"its end plus {bounds.late_ms // 1000} s of lateness"
    return (
        f"day {bounds.day} of topic {topic} is not complete: {', '.join(behind)} "
        f"(each partition needs a message past {past}; pass allow_incomplete to read it anyway)"
    )
