"""What a quality run reads and holds against: what one day's decode recorded, and the thresholds it must meet."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Thresholds:
    """What counts as passing; `now` (UTC) pins the future-time check for reproducible runs."""

    max_failure_ratio: float = 0.0
    max_reject_rate: float = 0.05
    future_tolerance: dt.timedelta = dt.timedelta(minutes=5)
    sync_tolerance: dt.timedelta = dt.timedelta(minutes=5)
    now: dt.datetime | None = None


@dataclass
class Partition:
    """One dt of the lake as its decode runs recorded it: the counts per topic (read, filtered, ...) and the
    gaps and overlaps of Kafka offsets between this day and the days beside it (`model.kafka_offsets`)."""

    dt: str
    recorded: dict[str, dict[str, int]] = field(default_factory=dict)
    kafka_gaps: list = field(default_factory=list)
