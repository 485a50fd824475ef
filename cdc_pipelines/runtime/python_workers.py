"""What every `mapInArrow` function of this project does around its per-row Python work, and the
failure a test injects into it."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Decoding and encoding make many small dicts and no reference cycles: the cycle collector, which
    runs every few hundred allocations, would only walk them (a batch's rows are all alive until its
    Arrow columns are built, so each pass walks more). It is off while a batch is turned into rows
    and back into Arrow columns."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# testing only: set to make the first attempt of every decode task fail after its first batch, to show
# that the counts and the rows stay exact when Spark runs a task again (`spark.task.maxFailures`)
FAIL_FIRST_ATTEMPT_ENV = "CDC_FAIL_FIRST_ATTEMPT"


def failure_injected() -> bool:
    """Whether this run fails each task's first attempt (read on the driver, shipped with the function)."""
    return os.environ.get(FAIL_FIRST_ATTEMPT_ENV, "") == "1"


def fail_first_attempt() -> None:
    """Fail the task here when it is its first attempt."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is not None and context.attemptNumber() == 0:
        raise RuntimeError(f"{FAIL_FIRST_ATTEMPT_ENV}: first attempt of task {context.taskAttemptId()} failed")
