"""What a quality run reads and holds against: one day of the lake and the thresholds it must meet."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from pyspark.sql import DataFrame


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
    """One dt of the lake: its events, its rejects and the counts its decode run recorded (if any)."""

    dt: str
    changes: DataFrame | None  # None where the day is judged in process (`in_process`), its rows as dicts
    rejects: DataFrame | None
    recorded: dict[str, dict[str, int]] = field(default_factory=dict)
    # gaps and overlaps of Kafka offsets between this day and the days beside it (model.kafka_offsets)
    kafka_gaps: list = field(default_factory=list)
