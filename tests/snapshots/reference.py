"""An independent reference for snapshots: the demo generator's true events folded in plain Python.

Written from the rules (docs/snapshots.md), not from the Spark code: events in generator order
(they are already in event-time order), INSERT/UPDATE set the after image under its key, an UPDATE
whose key changed drops the old key, DELETE drops the before image's key, TRUNCATE empties the table.
With `history`, every key's versions too: each set opens one (its op, image and event time), and the
key's next change or a TRUNCATE ends the open one at its own event time.
"""

from __future__ import annotations

from collections import Counter

from cdc_pipelines.demo.extracts import TABLES


def key(table: tuple, image: dict) -> tuple:
    return tuple(image[c] for c in TABLES[table][0])


def _close(history: dict | None, table: tuple, k: tuple, at) -> None:
    versions = history.setdefault(table, {}).get(k, []) if history is not None else []
    if versions and versions[-1]["end"] is None:
        versions[-1]["end"] = at


def fold(state: dict, events: list[dict], history: dict | None = None) -> Counter:
    """Apply `events` to `state` ({(db, table): {key: row}}) in place; return anomalies by (table, kind).

    `history` ({(db, table): {key: [{"row", "op", "start", "end"}, ...]}}) gains the versions."""
    anomalies = Counter()
    for e in events:
        table = (e["db"], e["table_name"])
        rows = state.setdefault(table, {}) if table in TABLES else None
        if rows is None:
            continue
        at = e["event_time"]
        if e["op"] == "TRUNCATE":
            for k in rows:
                _close(history, table, k, at)
            rows.clear()
        elif e["op"] == "DELETE":
            _close(history, table, key(table, e["before"]), at)
            if rows.pop(key(table, e["before"]), None) is None:
                anomalies[table, "delete_of_missing_key"] += 1
        elif e["op"] in ("INSERT", "UPDATE", "UPSERT"):
            old = key(table, e["before"]) if e["before"] else key(table, e["after"])
            new = key(table, e["after"])
            if e["op"] == "INSERT" and old in rows:
                anomalies[table, "insert_of_existing_key"] += 1
            if e["op"] == "UPDATE" and rows.pop(old, None) is None:
                anomalies[table, "update_of_missing_key"] += 1
            _close(history, table, old, at)
            _close(history, table, new, at)
            rows[new] = dict(e["after"])
            if history is not None:
                history[table].setdefault(new, []).append({"row": dict(e["after"]), "op": e["op"], "start": at,
                                                           "end": None})  # fmt: skip
    return anomalies
