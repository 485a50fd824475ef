"""A pool of Python processes for the work that runs without Spark on one machine (the decode of a local
extract, the encode of a local lake): Spark's executors are what a cluster gives; on one machine, one
process per core runs the same per-message functions without a JVM beside them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def processes(conf: Mapping[str, str], setting: str) -> int:
    """A pool's size: the `setting` in `conf`, else the cores this process may use."""
    return int(conf[setting]) if setting in conf else cores()


@contextmanager
def process_map(workers: int) -> Iterator[Callable]:
    """`map` over a pool of `workers` processes, or in this process for one (no process to start)."""
    if workers <= 1:
        yield lambda fn, *args: list(map(fn, *args))
        return
    context = get_context("spawn")  # not fork: this process may already run pyarrow's and delta-rs's threads
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    try:
        yield lambda fn, *args: list(pool.map(fn, *args))
    finally:
        # not waited for: the processes, their work done, exit while this one commits (waiting took 0.24 s)
        pool.shutdown(wait=False, cancel_futures=True)
