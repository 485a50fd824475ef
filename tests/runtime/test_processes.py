"""The process pool outlives a step: later steps reuse its processes, and it starts anew where they would
read what changed (the environment) or where one of them died."""

import os
from concurrent.futures.process import BrokenProcessPool

import pytest

from cdc_pipelines.runtime import processes
from cdc_pipelines.runtime.processes import process_map


def _pid_and_setting(_: int) -> tuple[int, str | None]:
    return os.getpid(), os.environ.get("CDC_TEST_SETTING")


def _exit(_: int) -> None:
    os._exit(3)


def _map(fn, workers: int = 2) -> list:
    with process_map(workers) as run:
        return run(fn, range(workers))


def test_a_pool_is_reused_until_the_environment_changes(monkeypatch):
    monkeypatch.setenv("CDC_TEST_SETTING", "a")
    first = _map(_pid_and_setting)
    pool = processes._SHARED.pool
    again = _map(_pid_and_setting)
    assert {s for _, s in first} == {"a"} and os.getpid() not in {p for p, _ in first}
    # the same pool (which of its processes ran a task is the pool's choice: one may still be starting)
    assert processes._SHARED.pool is pool and {s for _, s in again} == {"a"}
    monkeypatch.setenv("CDC_TEST_SETTING", "b")
    changed = _map(_pid_and_setting)
    assert {s for _, s in changed} == {"b"} and not {p for p, _ in changed} & {p for p, _ in first}
    assert _map(_pid_and_setting, 1) == [(os.getpid(), "b")]  # one process: this one


def test_a_setting_for_a_library_the_pool_never_runs_keeps_the_pool(monkeypatch):
    _map(_pid_and_setting)
    pool = processes._SHARED.pool
    monkeypatch.setenv("GX_ANALYTICS_ENABLED", "false")  # what the quality step's GX suite sets
    _map(_pid_and_setting)
    assert pool is not None and processes._SHARED.pool is pool


def test_a_pool_whose_process_died_is_started_anew():
    before = _map(_pid_and_setting)
    with pytest.raises(BrokenProcessPool):
        _map(_exit)
    after = _map(_pid_and_setting)
    assert len(after) == 2 and not {p for p, _ in after} & {p for p, _ in before}
