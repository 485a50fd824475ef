"""Per-partition message counts of a decode run, kept in the lake beside the tables.

The canonical table has one row per event, not per message (canal arrays fan out, split updates
merge), so the number of messages read cannot be recovered from it. The run writes its counts here
so a later conservation check can compare them with what the lake holds.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from cdc_pipelines.lake.partition_paths import escape_value, unescape_value

COUNTS_DIR = "counts"
COUNTS_FILE = "counts.json"


def counts_path(lake_root: str | Path, dt: str, topic: str) -> Path:
    return Path(lake_root) / COUNTS_DIR / f"dt={escape_value(dt)}" / f"source_topic={escape_value(topic)}" / COUNTS_FILE


def write_counts(lake_root: str | Path, dt: str, per_topic: Mapping[str, Mapping[str, int]]) -> None:
    """Write `{read, decoded, rejected, events}` of each topic for `dt`, atomically (rename)."""
    for topic, counts in per_topic.items():
        path = counts_path(lake_root, dt, topic)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".counts-")
        with os.fdopen(fd, "w") as fh:
            json.dump({k: int(v) for k, v in counts.items()}, fh, sort_keys=True)
        os.replace(tmp, path)


def read_counts(lake_root: str | Path, dt: str) -> dict[str, dict[str, int]]:
    """Counts recorded for `dt`, by topic; empty when the run recorded none."""
    day = Path(lake_root) / COUNTS_DIR / f"dt={escape_value(dt)}"
    out = {}
    for path in sorted(day.glob(f"source_topic=*/{COUNTS_FILE}")):
        out[unescape_value(path.parent.name.split("=", 1)[1])] = json.loads(path.read_text())
    return out
