"""A command killed with SIGKILL, it and every process it started, once its new data files are landing."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest


def kill_once_files_land(command: list[str], env: dict[str, str], table: Path, seconds: float = 240) -> None:
    """Run `command` in a session of its own and SIGKILL the session as soon as a Parquet file appears under
    `table` that was not there before; fail if it ends or `seconds` pass first."""
    before = set(table.rglob("*.parquet"))
    proc = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + seconds
    try:
        while not set(table.rglob("*.parquet")) - before:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the command never started writing: {proc.communicate()[1].decode()[-2000:]}")
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
