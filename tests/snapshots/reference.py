"""An independent reference for snapshots: the demo generator's true events folded in plain Python.

Written from the rules (README "Table snapshots"), not from the Spark code: events in generator order
(they are already in event-time order), INSERT/UPDATE set the after image under its key, an UPDATE
whose key changed drops the old key, DELETE drops the before image's key, TRUNCATE empties the table.
"""

from __future__ import annotations

from collections import Counter

from cdc_pipelines.demo import TABLES


def key(table: tuple, image: dict) -> tuple:
    return tuple(image[c] for c in TABLES[table][0])


def fold(state: dict, events: list[dict]) -> Counter:
    """Apply `events` to `state` ({(db, table): {key: row}}) in place; return anomalies by (table, kind)."""
    anomalies = Counter()
    for e in events:
        table = (e["db"], e["table_name"])
        rows = state.setdefault(table, {}) if table in TABLES else None
        if rows is None:
            continue
        if e["op"] == "TRUNCATE":
            rows.clear()
        elif e["op"] == "DELETE":
            if rows.pop(key(table, e["before"]), None) is None:
                anomalies[table, "delete_of_missing_key"] += 1
        elif e["op"] in ("INSERT", "UPDATE", "UPSERT"):
            old = key(table, e["before"]) if e["before"] else key(table, e["after"])
            if e["op"] == "INSERT" and old in rows:
                anomalies[table, "insert_of_existing_key"] += 1
            if e["op"] == "UPDATE" and rows.pop(old, None) is None:
                anomalies[table, "update_of_missing_key"] += 1
            rows[key(table, e["after"])] = dict(e["after"])
    return anomalies
