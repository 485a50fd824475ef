"""What the one decode pass reports beside the rows it writes: its delivery hashes and its rejects.

Two Spark accumulators the Python tasks add to. Spark merges a task's updates once it succeeds, and a
failed attempt's never; a stage run again (a lost shuffle) can add a task's twice, so the driver takes
them as a superset: repeated hashes are only candidates, compared exactly before any event is marked,
and rejects are deduplicated by their lineage (a message has at most one reject) and used only when
their number equals the exact count the write observed. Each task sends at most `REJECT_BYTES` of raw
text; past that the driver decodes the day's rejects in a pass of their own (`decode.runner`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyspark import Accumulator, AccumulatorParam, SparkContext

# raw text one task sends with its rejects; a task past it sends OVERFLOW instead of the rest
REJECT_BYTES = 4 << 20
OVERFLOW = None


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
    """The accumulators of one decode: `hashes` (numpy int64 arrays) and `rejects` (reject row tuples:
    source_file, source_line, raw, raw_encoding, reason; `OVERFLOW` where a task sent no more)."""

    hashes: Accumulator
    rejects: Accumulator

    @classmethod
    def create(cls, context: SparkContext) -> PassResults:
        return cls(context.accumulator([], _ListParam()), context.accumulator([], _ListParam()))

    def repeated_hashes(self) -> bool:
        """Whether any delivery hash came more than once (then the events are compared exactly)."""
        arrays = self.hashes.value
        if not arrays:
            return False
        hashes = np.sort(np.concatenate(arrays))
        return bool(hashes.size > 1 and (hashes[1:] == hashes[:-1]).any())

    def reject_rows(self) -> list[tuple] | None:
        """The rejects the tasks sent, one per message; None when a task sent only part of its own."""
        rows = self.rejects.value
        if any(row is OVERFLOW for row in rows):
            return None
        return list({(row[0], row[1]): row for row in rows}.values())


class TaskReports:
    """A task's side of `PassResults`: hashes gathered per batch, rejects up to the byte budget."""

    __slots__ = ("results", "budget", "overflowed")

    def __init__(self, results: PassResults | None):
        self.results = results
        self.budget = REJECT_BYTES
        self.overflowed = False

    def add(self, hashes: list[int], rejects: list[tuple]) -> None:
        if self.results is None:
            return
        if hashes:
            self.results.hashes.add(np.array(hashes, dtype=np.int64))
        if self.overflowed or not rejects:
            return
        for row in rejects:
            self.budget -= len(row[2] or "")
            if self.budget < 0:
                self.overflowed = True
                self.results.rejects.add(OVERFLOW)
                return
        self.results.rejects.add(list(rejects))
