"""`judged` and `judged_day`: a day of hand-built events judged by each engine in turn."""

from __future__ import annotations

import itertools

import pytest

from tests.quality.rows import judge_day


@pytest.fixture
def judged_day(engine, tmp_path):
    """judged_day(rows, recorded=None, rejects=None, thresholds=THRESHOLDS, gx=None) -> DayQuality: each call
    a lake of its own, judged by the test's engine."""
    lakes = itertools.count()
    return lambda rows, **kwargs: judge_day(engine, tmp_path / f"lake{next(lakes)}", rows, **kwargs)


@pytest.fixture
def judged(judged_day):
    """judged(rows, ...) -> {rule: RuleResult} of `judged_day`."""
    return lambda rows, **kwargs: {r.rule: r for r in judged_day(rows, **kwargs).results}
