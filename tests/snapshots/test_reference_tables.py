"""The Delta tables against the independent reference (`reference.fold`): the demo generator's true
events for two days (both days' keys from 0, so day 2's inserts replace day 1's rows of the same keys:
anomalies, and versions closed), applied with
`snapshot_days`; the current table must hold the reference state and the history table every version
the reference fold opened (image, op, start and end), value for value in the column's Delta type,
and delta-rs must read both tables as Spark does.
A rerun of the last day and a backfill of the first give exactly the clean run's tables.
"""

import base64
import datetime as dt
import decimal
import json

from cdc_pipelines.demo.extracts import TABLES, canonical_events
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.store import table_root
from tests.lake.partitions import write_partitions
from tests.snapshots import delta_rs
from tests.snapshots.events import changes_df
from tests.snapshots.reference import fold

DAYS = (dt.date(2024, 1, 1), dt.date(2024, 1, 2))
PER_DAY = 40
PARSE = {
    "bigint": int, "boolean": lambda v: v == "true", "binary": base64.b64decode, "date": dt.date.fromisoformat,
    "timestamp_ntz": dt.datetime.fromisoformat, "string": str,
}  # fmt: skip


def _typed(value, type_name):
    if value is None:
        return None
    if type_name.startswith("decimal"):
        return decimal.Decimal(value)
    return PARSE[type_name](value)


def _path(root, table, kind):
    return join(table_root(root, table[0], None, table[1]), kind)


def _check(spark, root, state, history):
    for table, rows in state.items():
        pk, logical = TABLES[table]
        types, current = delta_rs.spark_rows(spark, _path(root, table, "current"))
        got = {tuple(json.loads(r._cdc_key)): r.asDict() for r in current}
        assert got.keys() == rows.keys(), table
        for k, row in rows.items():
            assert {c: got[k][c] for c in row} == {c: _typed(v, types[c]) for c, v in row.items()}, (table, k)
            assert all(got[k][c] is None for c in logical if c not in row), (table, k)
        types, opened = delta_rs.spark_rows(spark, _path(root, table, "history"))
        versions: dict = {}
        for r in sorted(opened, key=lambda r: (r._cdc_start_at, r._cdc_event_id)):
            versions.setdefault(tuple(json.loads(r._cdc_key)), []).append(r.asDict())
        want = history.get(table, {})
        assert versions.keys() == want.keys(), table
        for k, vs in want.items():
            assert [(v["_cdc_op"], v["_cdc_start_at"], v["_cdc_end_at"]) for v in versions[k]] == [
                (v["op"], v["start"].replace(tzinfo=None), v["end"] and v["end"].replace(tzinfo=None)) for v in vs
            ], (table, k)
            for v, g in zip(vs, versions[k], strict=True):
                assert {c: g[c] for c in v["row"]} == {c: _typed(x, types[c]) for c, x in v["row"].items()}, (table, k)


def _tables(root):
    return {(table, kind): delta_rs.table_state(_path(root, table, kind)) for table in TABLES
            for kind in ("current", "history")}  # fmt: skip


def _rows(summary):
    """Each table's live rows as the summary gives them (rows before the day plus the MERGE's metrics)."""
    return {label: t["rows"] for label, t in summary["per_table"].items() if t["rows"]}


def test_current_and_history_equal_the_reference_fold(spark, tmp_path):
    lake = tmp_path / "lake"
    state: dict = {}
    history: dict = {}
    rows = {}
    for day in DAYS:
        day_events = list(canonical_events(day, PER_DAY, keys_from=0))
        fold(state, day_events, history)
        write_partitions(changes_df(spark, day_events), lake / "changes")
        summary = snapshot_days(spark, lake, [day.isoformat()])[day.isoformat()]
        _check(spark, lake / "snapshots", state, history)
        rows[day.isoformat()] = _rows(summary)
        assert rows[day.isoformat()] == {f"{db}.{name}": len(keys) for (db, name), keys in state.items() if keys}
    assert summary["anomalies"] > 0, "day 2 inserts keys day 1 left: anomalies both must see"
    clean = _tables(lake / "snapshots")
    rerun = snapshot_days(spark, lake, [DAYS[1].isoformat()])
    assert _tables(lake / "snapshots") == clean
    assert {d: _rows(s) for d, s in rerun.items()} == {DAYS[1].isoformat(): rows[DAYS[1].isoformat()]}
    again = snapshot_days(spark, lake, [DAYS[0].isoformat()])
    assert list(again) == [d.isoformat() for d in DAYS] and _tables(lake / "snapshots") == clean
    for table in TABLES:  # and Spark reads the backfilled tables as delta-rs does
        for kind in ("current", "history"):
            delta_rs.assert_same_as_spark(spark, _path(lake / "snapshots", table, kind))
    assert {d: _rows(s) for d, s in again.items()} == rows
