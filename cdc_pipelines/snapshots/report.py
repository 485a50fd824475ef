"""What the quality report shows of a day's snapshot: its summary plus a few anomalies of each kind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cdc_pipelines.snapshots.schema import TABLE
from cdc_pipelines.snapshots.store import read_summary

EXAMPLE_COLUMNS = (*TABLE, "kind", "event_id", "op", "detail")


def _order(row: Mapping[str, Any], columns: Iterable[str]) -> tuple:
    return tuple((row[c] is not None, row[c]) for c in columns)


def first_anomalies(rows: Iterable[Mapping[str, Any]], per_kind: int) -> list[dict]:
    """The first `per_kind` anomalies of each kind by table and event id (nulls first), as {EXAMPLE_COLUMNS}:
    of the first anomalies of separate batches, the first of them all."""
    kinds: dict[str, list[dict]] = {}
    for row in rows:
        kinds.setdefault(row["kind"], []).append({c: row[c] for c in EXAMPLE_COLUMNS})
    first = (sorted(found, key=lambda r: _order(r, (*TABLE, "event_id")))[:per_kind] for found in kinds.values())
    return [r for rows in first for r in rows]


def snapshot_report(engine, root: str | Path, day: str, per_kind: int = 5) -> dict | None:
    """The day's summary with `examples` (up to `per_kind` anomalies of each kind, `first_anomalies` of them by
    the `engine`'s `snapshot_anomalies`); None if never applied."""
    summary = read_summary(root, day)
    if summary is None:
        return None
    examples = engine.snapshot_anomalies(str(root), day, per_kind)
    return {**summary, "examples": sorted(examples, key=lambda e: _order(e, ("kind", "event_id", *TABLE)))}
