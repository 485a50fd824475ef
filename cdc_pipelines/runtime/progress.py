"""Progress of Spark work on a terminal: stage, tasks done of total, messages so far.

A thread polls Spark's status tracker while a command runs and draws one `rich` status line on
stderr. Nothing is drawn when stderr is not a terminal, so logs and pipes see only the command's own
output, whose last line stays its JSON summary. Messages are counted by an accumulator the decode
adds each Arrow batch to; Spark merges it as tasks finish.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark import Accumulator
from pyspark.sql import SparkSession

_MESSAGES: Accumulator | None = None


def message_counter() -> Accumulator | None:
    """The accumulator decodes add their message counts to, while a progress display is shown."""
    return _MESSAGES


def _describe(spark: SparkSession, messages: Accumulator | None) -> str:
    tracker = spark.sparkContext.statusTracker()
    parts = []
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            name = info.name.split(" at ")[0]
            parts.append(f"stage {stage_id} {name}: {info.numCompletedTasks}/{info.numTasks} tasks")
    text = "; ".join(parts) or "waiting for Spark"
    if messages is not None and messages.value:
        text += f"; {messages.value:,} messages decoded"
    return text


@contextmanager
def spark_progress(spark: SparkSession, label: str) -> Iterator[None]:
    """Show Spark's progress under `label` on a terminal while the block runs."""
    global _MESSAGES
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    _MESSAGES = spark.sparkContext.accumulator(0)
    done = threading.Event()
    with console.status(label) as status:

        def poll() -> None:
            while not done.wait(0.5):  # seconds between updates
                status.update(f"{label}: {_describe(spark, _MESSAGES)}")

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            _MESSAGES = None
