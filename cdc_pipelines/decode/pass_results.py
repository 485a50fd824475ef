"""What the one decode pass reports beside the rows it writes: its delivery hashes and its rejects.

Two Spark accumulators the Python tasks add to. Spark merges a task's updates once it succeeds, and a
failed attempt's never; a stage run again (a lost shuffle) can add a task's twice, so the driver takes
them as a superset: each event's hash comes with the first 64 bits of its event id, a pair reported
twice counts once, and the events whose hash repeats are only candidates, compared exactly before any
is marked (so the driver reads back only those: `candidates`). Rejects are deduplicated by their
lineage (a message has at most one reject) and used only when their number equals the exact count the
write observed. Each task sends at most `REJECT_BYTES` of raw text; past that the driver decodes the
day's rejects in a pass of their own (`decode.runner`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pyspark import Accumulator, AccumulatorParam, SparkContext

from cdc_pipelines.decode.delivery import DeliveryIdentity

# raw text one task sends with its rejects; a task past it sends OVERFLOW instead of the rest
REJECT_BYTES = 4 << 20
OVERFLOW = None
# hex digits of an event id sent with its hash: 64 bits tell the candidates apart where read back (a
# prefix two events share only adds a candidate: the comparison is exact)
ID_PREFIX = 16


class _ListParam(AccumulatorParam):
    """Lists concatenated: a task adds items, the driver merges the tasks' lists."""

    def zero(self, value):
        return []

    def addInPlace(self, value1, value2):  # noqa: N802 - Spark's name
        if isinstance(value2, list):
            value1.extend(value2)
        else:
            value1.append(value2)
        return value1


@dataclass
class PassResults:
    """The accumulators of one decode: `hashes` (numpy uint64 arrays of two rows: delivery hashes, event
    id prefixes) and `rejects` (reject row tuples: source_file, source_line, raw, raw_encoding, reason;
    `OVERFLOW` where a task sent no more)."""

    hashes: Accumulator
    rejects: Accumulator

    @classmethod
    def create(cls, context: SparkContext) -> PassResults:
        return cls(context.accumulator([], _ListParam()), context.accumulator([], _ListParam()))

    def candidates(self) -> list[str]:
        """The event id prefixes (16 hex digits, `ID_PREFIX` of them) of the events whose delivery hash
        another event shares: the only ones compared exactly. Empty on a day without repeats."""
        return candidate_prefixes(self.hashes.value)

    def reject_rows(self) -> list[tuple] | None:
        """The rejects the tasks sent, one per message; None when a task sent only part of its own."""
        rows = self.rejects.value
        if any(row is OVERFLOW for row in rows):
            return None
        return list({(row[0], row[1]): row for row in rows}.values())


def hash_array(events: Sequence[Mapping], identity: DeliveryIdentity) -> np.ndarray:
    """The report of finished `events` (see `PassResults.hashes`): their delivery hashes, their id prefixes."""
    hashes = [identity.hash(event) for event in events]
    return np.array([hashes, [int(event["event_id"][:ID_PREFIX], 16) for event in events]], dtype=np.uint64)


def candidate_prefixes(arrays: list[np.ndarray]) -> list[str]:
    """`PassResults.candidates` of reported hash arrays (2 rows: delivery hashes, event id prefixes): the
    prefixes of the events whose hash another event shares, a pair reported twice counted once."""
    if not arrays:
        return []
    hashes, prefixes = np.concatenate(arrays, axis=1)
    # hashes seen twice first (one sort of a long column), then only their pairs made unique: a task's
    # report added twice counts once. `np.unique(axis=1)` of all pairs took 1.9 s for 2M events
    ordered = np.sort(hashes)
    twice = ordered[1:][ordered[1:] == ordered[:-1]]
    if not twice.size:
        return []
    seen = np.isin(hashes, twice)
    pairs = np.unique(np.stack([hashes[seen], prefixes[seen]]), axis=1)
    distinct, counts = np.unique(pairs[0], return_counts=True)
    repeated = distinct[counts > 1]
    return [f"{prefix:0{ID_PREFIX}x}" for prefix in np.unique(pairs[1][np.isin(pairs[0], repeated)]).tolist()]


class TaskReports:
    """A task's side of `PassResults`: hashes gathered per batch, rejects up to the byte budget."""

    __slots__ = ("results", "budget", "overflowed")

    def __init__(self, results: PassResults | None):
        self.results = results
        self.budget = REJECT_BYTES
        self.overflowed = False

    def add(self, hashes: np.ndarray | None, rejects: list[tuple]) -> None:
        """A batch's delivery hashes (`hash_array`) and its rejects."""
        if self.results is None:
            return
        if hashes is not None and hashes.size:
            self.results.hashes.add(hashes)
        if self.overflowed or not rejects:
            return
        for row in rejects:
            self.budget -= len(row[2] or "")
            if self.budget < 0:
                self.overflowed = True
                self.results.rejects.add(OVERFLOW)
                return
        self.results.rejects.add(list(rejects))
