"""Stopping the servers the system tests start (a Kafka broker, a schema registry) by their pid."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_by_pid(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 15 s: a server that ignores the first still ends."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
