"""What a decode pass reports beside its rows: candidates for the exact redelivery comparison."""

from __future__ import annotations

import random

import numpy as np

from cdc_pipelines.decode.pass_results import OVERFLOW, REJECT_BYTES, PassResults, TaskReports


class _Accumulator:
    """An accumulator as the driver sees it once the tasks' updates are merged."""

    def __init__(self):
        self.value = []

    def add(self, item):
        (self.value.extend if isinstance(item, list) else self.value.append)(item)


def _results() -> PassResults:
    return PassResults(_Accumulator(), _Accumulator())


def _id(n: int) -> str:
    return f"{n:016x}" + "f" * 16


def _reported(hashes: list[int], ids: list[int]) -> np.ndarray:
    """A task's report (`pass_results.hash_array`) of events with these hashes and ids `_id(n)`."""
    return np.array([hashes, [int(_id(n)[:16], 16) for n in ids]], dtype=np.uint64)


def test_only_events_sharing_a_hash_are_candidates():
    results = _results()
    TaskReports(results).add(_reported([1, 2, 3], [10, 20, 30]), [])
    TaskReports(results).add(_reported([4, 2], [40, 50]), [])
    assert results.candidates() == [_id(20)[:16], _id(50)[:16]]


def test_a_task_reported_twice_is_no_repeat():
    """A stage run again (a lost shuffle) adds a task's reports a second time: the same event twice."""
    results = _results()
    for _ in range(2):
        TaskReports(results).add(_reported([1, 2], [10, 20]), [])
    assert results.candidates() == []
    assert _results().candidates() == []


def test_candidates_are_the_events_whose_hash_another_event_has():
    """Against the definition, on random reports with few distinct hashes, some tasks reported twice."""
    rng = random.Random(7)
    for _ in range(200):
        reports = [[(rng.randrange(12), rng.randrange(40)) for _ in range(rng.randrange(8))] for _ in range(4)]
        reports += [r for r in reports if rng.random() < 0.3]
        results = _results()
        for report in reports:
            if report:
                results.hashes.add(np.array(list(zip(*report, strict=True)), dtype=np.uint64))
        pairs = {pair for report in reports for pair in report}
        expected = sorted({f"{p:016x}" for h, p in pairs if sum(1 for other, _ in pairs if other == h) > 1})
        assert results.candidates() == expected


def test_rejects_past_a_tasks_budget_overflow():
    results = _results()
    reports = TaskReports(results)
    reports.add(None, [("f", 1, "x" * (REJECT_BYTES // 2), "text", "bad")])
    assert len(results.reject_rows()) == 1
    reports.add(None, [("f", 2, "x" * REJECT_BYTES, "text", "bad")])
    assert results.reject_rows() is None and OVERFLOW in results.rejects.value
