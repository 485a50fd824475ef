"""Whether a day's extract folder is ready to decode: the rule the Dagster sensor applies to a file topic.

A writer that finishes a day puts a `_SUCCESS` marker in its folder (Spark's and Hadoop's committers do);
one that does not leaves files that stop changing. So a day is ready when the marker is there, or when the
folder's newest file is older than the settle time. A folder elsewhere than on this machine (`s3a://`) is
listed through Hadoop, which needs a Spark session; the sensor reads local folders only.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from cdc_pipelines.runtime.storage import is_hidden

SUCCESS_MARKER = "_SUCCESS"
# minutes an extract folder's files must stay unchanged before a day without a _SUCCESS marker is ready
# (DEFAULT_SETTLE_MINUTES: 30)
SETTLE_MINUTES_ENV = "CDC_EXTRACT_SETTLE_MINUTES"
DEFAULT_SETTLE_MINUTES = 30.0


def settle_minutes(environ=os.environ) -> float:
    """CDC_EXTRACT_SETTLE_MINUTES, else `DEFAULT_SETTLE_MINUTES`."""
    return float(environ.get(SETTLE_MINUTES_ENV, DEFAULT_SETTLE_MINUTES))


def folder_waits_for(folder: str | Path, settle_minutes: float, now: float | None = None) -> str | None:
    """None when the day's extract `folder` is ready (its `_SUCCESS` marker, or no file changed for
    `settle_minutes`), else what it still waits for."""
    folder = Path(folder)
    if (folder / SUCCESS_MARKER).exists():
        return None
    listed = folder.rglob("*") if folder.is_dir() else ()
    files = [p for p in listed if p.is_file() and not is_hidden(p.relative_to(folder))]
    if not files:
        return f"no files in {folder} yet"
    changed = max(p.stat().st_mtime for p in files)
    quiet_s = (time.time() if now is None else now) - changed
    if quiet_s >= settle_minutes * 60:
        return None
    return f"no {SUCCESS_MARKER} in {folder}, and a file changed {quiet_s / 60:.0f} of {settle_minutes:g} minutes ago"
