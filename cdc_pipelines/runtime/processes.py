"""A pool of Python processes for the work that runs without Spark on one machine (the decode of a local
extract, the quality of a local day, the encode of a local lake): Spark's executors are what a cluster
gives; on one machine, one process per core runs the same per-message functions without a JVM beside them.

The pool outlives the step that started it: a Dagster run's decode, quality and encode steps (or a test
session's calls) share its processes, so each step after the first skips their start and imports (about
0.5 s of a day's run each). A pool is started anew when a step asks for more processes, when the
environment or the working folder it was started in changed (its processes read both), or when one of
its processes died.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import get_context

from cdc_pipelines.runtime.settings import whole_number


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def processes(conf: Mapping[str, str], setting: str) -> int:
    """A pool's size: the `setting` in `conf`, else the cores this process may use."""
    return whole_number(conf, setting, cores())


# fewer rows are worked in this process alone: a process's start and imports cost about a second
POOL_MIN_ROWS = 50_000


def workers_for(rows: int, processes: int, batch_rows: int) -> int:
    """The processes that share `rows` dealt out `batch_rows` at a time: one below `POOL_MIN_ROWS`, else at
    most `processes` and never more than there are batches."""
    return max(1, min(processes, -(-rows // batch_rows))) if rows >= POOL_MIN_ROWS else 1


# what this project sets for libraries its pool never runs (GX in the quality step, PySpark): a change to
# them keeps the pool (GX's setting restarted it between a Dagster run's quality and encode steps)
_NOT_READ_BY_POOL = frozenset({"GX_ANALYTICS_ENABLED", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"})


class _Shared:
    """This process's one pool and what it was started with (its size, environment and folder)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool: ProcessPoolExecutor | None = None
        self.started_with: tuple = ()

    def get(self, workers: int) -> ProcessPoolExecutor:
        with self.lock:
            now = (os.getcwd(), tuple(sorted(kv for kv in os.environ.items() if kv[0] not in _NOT_READ_BY_POOL)))
            if self.pool is not None and (self.started_with[0] < workers or self.started_with[1:] != now):
                self.drop()
            if self.pool is None:
                # spawn, not fork: this process may already run pyarrow's and delta-rs's threads
                self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"))
                self.started_with = (workers, *now)
            return self.pool

    def drop(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None


_SHARED = _Shared()


@contextmanager
def process_map(workers: int) -> Iterator[Callable]:
    """`map` over `workers` processes of this process's pool, or in this process for one (none to start).
    A pool larger than asked runs the tasks on as many processes as there are tasks."""
    if workers <= 1:
        yield lambda fn, *args: list(map(fn, *args))
        return
    pool = _SHARED.get(workers)
    try:
        yield lambda fn, *args: list(pool.map(fn, *args))
    except BrokenProcessPool:
        with _SHARED.lock:
            if _SHARED.pool is pool:
                _SHARED.drop()
        raise
