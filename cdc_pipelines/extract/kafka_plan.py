"""The offsets a day of a Kafka topic reads, planned once before any record is read, by either Kafka client.

The offsets are looked up (`OffsetLookup`: Kafka's Java consumer in Spark's JVM, `extract.kafka_lookup`, or
the native client, `extract.kafka_client`) and read as fixed ranges, so the read never depends on when it
runs: a day read before is read again at its recorded offsets. The checks that refuse a day (not complete,
offsets deleted by retention, a recreated topic) and the offsets recorded after the read are here once, with
no Spark and no client import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from cdc_pipelines.extract.kafka_days import DayBounds, incomplete_message
from cdc_pipelines.extract.kafka_lines import lineage_file
from cdc_pipelines.extract.kafka_source import KafkaSource, KafkaSourceError
from cdc_pipelines.model.kafka_offsets import PartitionOffsets


@dataclass(frozen=True)
class PartitionState:
    """What the broker holds of one partition now: its first retained offset, its high watermark, and the
    first offsets at or past the given timestamps (None where no message is that late)."""

    partition: int
    log_start: int
    high_watermark: int
    at: dict[int, int | None]


class OffsetLookup(Protocol):
    """A Kafka client's answers about the source's topic; every failure a `KafkaSourceError`."""

    def partition_states(self, timestamps: list[int]) -> list[PartitionState]:
        """Every partition of the topic, with its offsets at `timestamps` (Kafka's `offsetsForTimes`)."""
        ...

    def newest_timestamps(self, states: list[PartitionState]) -> dict[int, int | None]:
        """The timestamp of each partition's newest message (None for an empty one)."""
        ...


@dataclass(frozen=True)
class PlannedRange:
    """The offsets of one partition to read for a day, before the read: [start_offset, scan_end)."""

    partition: int
    start_offset: int
    end_offset: int
    scan_end: int


def day_waits_for(
    lookup: OffsetLookup, source: KafkaSource, bounds: DayBounds, states: list[PartitionState] | None = None
) -> str | None:
    """None when the day is complete (every partition holds a message at or past its end plus its late
    seconds), else why not, naming each partition behind. What the read requires and the sensor waits for;
    `states` the partitions' states when already looked up (at the day's scan end, among others)."""
    states = lookup.partition_states([bounds.scan_end_ms]) if states is None else states
    behind = [s for s in states if s.at[bounds.scan_end_ms] is None]
    if not behind:
        return None
    why = incomplete_message(source.topic, bounds, lookup.newest_timestamps(behind))
    return why or f"day {bounds.day} of topic {source.topic} is not complete"


def plan_ranges(
    lookup: OffsetLookup,
    source: KafkaSource,
    bounds: DayBounds,
    recorded: Mapping[int, PartitionOffsets] | None = None,
) -> list[PlannedRange]:
    """The offsets to read: those `recorded` for the day (a rerun), else looked up by its timestamps.

    Fails (KafkaSourceError) when the day is not complete (unless the source allows it), or when the
    broker no longer holds offsets the day needs (retention deleted them)."""
    states = lookup.partition_states([bounds.start_ms, bounds.end_ms, bounds.scan_end_ms])
    if recorded:
        planned = [PlannedRange(p.partition, p.start_offset, p.end_offset, p.scan_end) for p in recorded.values()]
    else:
        why = None if source.allow_incomplete else day_waits_for(lookup, source, bounds, states)
        if why:
            raise KafkaSourceError(why)
        planned = [_by_timestamps(s, bounds) for s in states]
        for state, plan in zip(states, planned, strict=True):
            # the first message kept is the day's first at or past its start: those before it were deleted,
            # and some may have been of this day (retention deletes whole segments, so mid-day is likely)
            trimmed = state.log_start > 0 and plan.start_offset == state.log_start < plan.scan_end
            if trimmed and not source.allow_incomplete:
                raise KafkaSourceError(
                    f"kafka topic {source.topic}: retention may have deleted offsets of day {bounds.day}: partition "
                    f"{state.partition} keeps offsets from {state.log_start}, the first it holds of the day"
                )
    by_partition = {s.partition: s for s in states}
    for plan in planned:
        state = by_partition.get(plan.partition)
        if state is None:
            raise KafkaSourceError(f"kafka topic {source.topic}: partition {plan.partition} no longer exists")
        if plan.start_offset < state.log_start and plan.scan_end > plan.start_offset:
            raise KafkaSourceError(
                f"kafka topic {source.topic}: retention deleted offsets of day {bounds.day}: partition "
                f"{plan.partition} starts at {state.log_start}, the day needs {plan.start_offset}"
            )
        if plan.scan_end > state.high_watermark:
            raise KafkaSourceError(
                f"kafka topic {source.topic}: partition {plan.partition} ends at {state.high_watermark}, "
                f"before offset {plan.scan_end} that day {bounds.day} read (the topic was recreated?)"
            )
    return sorted(planned, key=lambda p: p.partition)


def _by_timestamps(state: PartitionState, bounds: DayBounds) -> PlannedRange:
    """A partition's day by Kafka's time index; where no message is that late yet (an incomplete day read
    on purpose), the high watermark now."""

    def at(ts: int) -> int:
        found = state.at[ts]
        return state.high_watermark if found is None else found

    return PlannedRange(state.partition, at(bounds.start_ms), at(bounds.end_ms), at(bounds.scan_end_ms))


def reading(ranges: list[PlannedRange]) -> list[PlannedRange]:
    """The ranges that hold offsets to read."""
    return [r for r in ranges if r.scan_end > r.start_offset]


def day_offsets(
    ranges: list[PlannedRange], kept: Mapping[int, tuple[int, int, int]], bounds: DayBounds
) -> list[PartitionOffsets]:
    """The offsets recorded for the day: each planned range with the (first, last, count) of the records
    `kept` of it (those whose timestamp is in the day), by partition."""
    return [PartitionOffsets(r.partition, r.start_offset, r.end_offset, r.scan_end,
                             *kept.get(r.partition, (None, None, 0)), bounds.start_ms, bounds.end_ms)
            for r in ranges]  # fmt: skip


def read_counts(topic: str, offsets: list[PartitionOffsets]) -> dict[str, int]:
    """The messages read per lineage file: the left side of the conservation check."""
    return {lineage_file(topic, o.partition): o.messages for o in offsets if o.messages}
