"""Benchmark input at scale: the demo generator's messages, repeated to any number of lines.

Encoding millions of events one by one in Python would take longer than the benchmark itself, so a
block of realistic messages (every op, awkward values, a few malformed lines) is encoded once per
format and written again and again until the file holds the requested number of lines. Every copy
is a distinct message to the decoder (its lineage differs), and the mix of the block is kept.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cdc_pipelines import demo
from cdc_pipelines.bench.config import BLOCK_DAYS, BLOCK_EVENTS_PER_DAY


def block_events(days: int = BLOCK_DAYS, per_day: int = BLOCK_EVENTS_PER_DAY) -> list[dict]:
    """Canonical events of `days` generated days (the generator is quadratic in events per day)."""
    start = dt.date(2024, 1, 1)
    return [e for d in range(days) for e in demo.canonical_events(start + dt.timedelta(days=d), per_day)]


def message_block(format_id: str, events: list[dict], scratch: Path) -> list[str]:
    """The lines `format_id`'s encoder writes for `events` (malformed lines included)."""
    path = scratch / f"{format_id}.block.jsonl"
    demo.write_extract(format_id, events, path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.unlink()
    return lines


def write_messages(block: list[str], count: int, path: Path) -> dict[str, int]:
    """Write exactly `count` lines to `path`, cycling through `block`; return lines and bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    whole = "".join(block)
    copies, rest = divmod(count, len(block))
    with open(path, "w", encoding="utf-8") as out:
        for _ in range(copies):
            out.write(whole)
        out.write("".join(block[:rest]))
    return {"lines": count, "bytes": path.stat().st_size}
