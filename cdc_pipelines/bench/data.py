"""Benchmark input at scale: the demo generator's messages, copied to any number of lines.

Generating millions of events is quadratic in the demo generator, so a block of realistic events
(every op, awkward values, a few malformed lines) is generated once and copied. A copy written byte
for byte again would be a redelivered message to the decoder (marked and counted as one, see
`cdc_pipelines.decode.redeliveries`), which a real topic seldom holds: so each copy is the block's events moved
on in time by the block's length, encoded again (about 1 s per 20,000 events), and every message of a
file is a change of its own. The encoded copies are kept, so a larger file reuses a smaller one's.
"""

from __future__ import annotations

import datetime as dt
from itertools import islice
from pathlib import Path

from cdc_pipelines.bench.config import BLOCK_DAYS, BLOCK_EVENTS_PER_DAY
from cdc_pipelines.demo import extracts as demo


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


def moved(events: list[dict], by: dt.timedelta) -> list[dict]:
    """`events` with their event and sync times `by` later."""
    return [{**e, **{k: e[k] + by for k in ("event_time", "sync_time") if e.get(k) is not None}} for e in events]


class Messages:
    """One format's copies of a block of events (see the module), encoded as needed and kept in a file
    (millions of lines held in the driver would weigh on the memory the bench measures)."""

    def __init__(self, format_id: str, events: list[dict], scratch: Path, days: int) -> None:
        self.format_id, self.events, self.scratch, self.days = format_id, events, scratch, days
        self.kept = scratch / f"{format_id}.copies.jsonl"
        self.kept.unlink(missing_ok=True)
        self.lines = self.copies = 0

    def write(self, count: int, path: Path) -> dict[str, int]:
        """Write exactly `count` lines to `path`, copy after copy; return lines and bytes."""
        while self.lines < count:
            shift = dt.timedelta(days=self.days * self.copies)
            block = message_block(self.format_id, moved(self.events, shift), self.scratch)
            with open(self.kept, "a", encoding="utf-8") as out:
                out.write("".join(block))
            self.lines, self.copies = self.lines + len(block), self.copies + 1
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.kept, encoding="utf-8") as kept, open(path, "w", encoding="utf-8") as out:
            out.writelines(islice(kept, count))
        return {"lines": count, "bytes": path.stat().st_size}
