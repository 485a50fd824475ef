"""The offsets one day of a Kafka topic read, per partition, and the check that consecutive days meet.

A day's messages in a partition sit in the offsets [start_offset, scan_end): `start_offset` is the
first message at or past the day's start, `end_offset` the first at or past its end (where the next
day starts), `scan_end` the first past the end plus the lateness (a message of the day appended after
one of the next day is still read). The messages kept are those whose timestamp is in the day: `first`,
`last`, `messages`. Recording these makes a rerun read exactly the same messages, and lets the next
day's start be compared with this day's end: a gap means messages no day read, an overlap messages two
days may both hold (a day read before it was complete, or offsets changed under a rerun).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class PartitionOffsets:
    """One partition of one day as read (offsets are Kafka's; `last` inclusive, the ends exclusive)."""

    partition: int
    start_offset: int
    end_offset: int
    scan_end: int
    first: int | None
    last: int | None
    messages: int
    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class OffsetGap:
    """Where day `day`'s end and day `next_day`'s start differ in one partition."""

    source_topic: str
    partition: int
    day: str
    next_day: str
    end_offset: int
    next_start: int

    @property
    def kind(self) -> str:
        return "gap" if self.next_start > self.end_offset else "overlap"

    @property
    def messages(self) -> int:
        return abs(self.next_start - self.end_offset)

    def reason(self) -> str:
        what = "no day read" if self.kind == "gap" else "both days may hold"
        return (
            f"{self.kind} in topic {self.source_topic} partition {self.partition}: {self.day} ends at offset "
            f"{self.end_offset}, {self.next_day} starts at {self.next_start} ({self.messages} offsets {what})"
        )


def summarize(partitions: Iterable[PartitionOffsets]) -> dict[str, dict[str, int | None]]:
    """Per partition (as text: Dagster metadata keys are text) its offsets and message count."""
    shown = ("first", "last", "messages", "start_offset", "end_offset")
    return {str(p.partition): {k: getattr(p, k) for k in shown} for p in sorted(partitions, key=lambda p: p.partition)}


def find_gaps(days: Mapping[tuple[str, str], Iterable[PartitionOffsets]]) -> list[OffsetGap]:
    """Gaps and overlaps between each recorded day and the next recorded day of the same topic.

    `days` maps (topic, day) to the day's partitions. Only consecutive calendar days are compared (a day
    never read is not a gap of its neighbours); a partition missing on one side is not compared either.
    """
    import datetime as dt

    gaps = []
    for (topic, day), partitions in sorted(days.items()):
        next_day = (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()
        following = days.get((topic, next_day))
        if following is None:
            continue
        starts = {p.partition: p.start_offset for p in following}
        for p in sorted(partitions, key=lambda p: p.partition):
            if p.partition in starts and starts[p.partition] != p.end_offset:
                gaps.append(OffsetGap(topic, p.partition, day, next_day, p.end_offset, starts[p.partition]))
    return gaps
