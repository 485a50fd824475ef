"""A run of the daily job in this process, with a line per finished step on stderr.

Dagster's console logger prints every event of a run at DEBUG (174 lines for the demo's): the commands that
run the job in process (`demo`, `bench-daily`) put this logger in its place. Every event still goes to the
instance's event log, where `dagster dev` shows them; a failed step's line carries its error.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import dagster as dg

LOGGER = "step_progress"


class StepLines(logging.Handler):
    """`[n/N] step: done in S s` when a step ends, its error when it fails, and any ERROR record as it is."""

    def __init__(self, steps: int):
        super().__init__(logging.DEBUG)  # Dagster logs its step events at DEBUG
        self.steps, self.done = steps, 0

    def emit(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "dagster_meta", {}) or {}
        event = meta.get("dagster_event")
        if event is not None and event.event_type in (
            dg.DagsterEventType.STEP_SUCCESS,
            dg.DagsterEventType.STEP_FAILURE,
        ):
            self.done += 1
            line = f"[{self.done}/{self.steps}] {event.step_key}"
            if event.event_type == dg.DagsterEventType.STEP_SUCCESS:
                line += f": done in {event.event_specific_data.duration_ms / 1000:.1f} s"
            else:
                error = event.event_specific_data.error
                line += f": FAILED: {error.message.strip() if error else meta.get('orig_message', '')}"
            print(line, file=sys.stderr, flush=True)
        elif event is None and record.levelno >= logging.ERROR:
            print(f"{meta.get('step_key') or 'run'}: {meta.get('orig_message', record.getMessage())}", file=sys.stderr)


def step_progress_logger(steps: int) -> dg.LoggerDefinition:
    @dg.logger(description="a line per finished step on stderr")
    def _step_progress(_context: dg.InitLoggerContext) -> logging.Logger:
        log = logging.getLogger(LOGGER)
        log.handlers, log.propagate = [StepLines(steps)], False
        log.setLevel(logging.DEBUG)
        return log

    return _step_progress


def run_with_step_lines(
    job: dg.JobDefinition, instance: dg.DagsterInstance, **kwargs: Any
) -> dg.ExecuteInProcessResult:
    """`job.execute_in_process(instance=instance, **kwargs)` with `StepLines` as its only console logger."""
    quiet = job.with_logger_defs({LOGGER: step_progress_logger(len(job.nodes))})
    return quiet.execute_in_process(instance=instance, run_config={"loggers": {LOGGER: {}}}, **kwargs)
