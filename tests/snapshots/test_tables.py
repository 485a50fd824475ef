"""Spark's tables replace a day's keys (`tables.replace_current`, `replace_history`) as delta-rs's MERGEs
apply them: the same tables whatever the keys' characters and however the event times run."""

import datetime as dt
import json

from deltalake import DeltaTable

from cdc_pipelines.lake.io import write_partitions
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.store import table_root
from tests.snapshots import delta_rs
from tests.snapshots.events import T0, changes_df, delete, insert, update

D1, D2, D3 = "2024-01-01", "2024-01-02", "2024-01-03"
ODD = "q'\"\\x"  # a key with both quotes and a backslash


def _row(code, name):
    return {"code": code, "name": name}


def _at(seconds):
    return T0 + dt.timedelta(seconds=seconds)


EVENTS = [
    insert(1, _row("a", "a1"), pk=("code",)), insert(2, _row(ODD, "o1"), pk=("code",)),
    insert(3, _row("b", "b1"), pk=("code",)),
    update(1, _row("a", "a1"), _row("a", "a2"), pk=("code",), day=D2),
    update(2, _row(ODD, "o1"), _row(ODD, "o2"), pk=("code",), day=D2),
    # day 3's times run before day 2's: the versions it closes end before older versions of the key did
    update(1, _row("a", "a2"), _row("a", "a3"), pk=("code",), day=D3, at=_at(-86400)),
    update(2, _row("a", "a3"), _row("a", "a4"), pk=("code",), day=D3, at=_at(-86399)),
    delete(3, _row(ODD, "o2"), pk=("code",), day=D3, at=_at(-86398)),
    insert(4, _row("c", "c1"), pk=("code",), day=D3),
]  # fmt: skip


def _path(lake, kind):
    return join(table_root(lake / "snapshots", "db", None, "t"), kind)


def _operations(path):
    """Each commit's operation after the table's creation, a predicate's replacement as `WRITE WHERE`."""
    history = sorted(DeltaTable(path).history(), key=lambda c: c["version"])[1:]
    return [("WRITE WHERE" if c.get("operationParameters", {}).get("predicate") else c["operation"])
            if c["operation"] == "WRITE" else c["operation"] for c in history]  # fmt: skip


def test_keys_replaced_by_spark_equal_delta_rs_merges(spark, tmp_path):
    lakes = {name: tmp_path / name for name in ("spark", "delta_rs")}
    for lake in lakes.values():
        write_partitions(changes_df(spark, EVENTS), lake / "changes")
    with delta_rs.small_table_max_rows(spark, 0):
        by_spark = snapshot_days(spark, lakes["spark"], [D1, D2, D3])
    by_delta_rs = snapshot_days(spark, lakes["delta_rs"], [D1, D2, D3])
    for kind in ("current", "history"):
        assert delta_rs.table_state(_path(lakes["spark"], kind)) == delta_rs.table_state(_path(lakes["delta_rs"], kind))
        # day 1 appended; days 2 and 3 replaced their keys' rows
        assert _operations(_path(lakes["spark"], kind)) == ["WRITE", "WRITE WHERE", "WRITE WHERE"]
    assert [by_spark[d]["rows"] for d in (D1, D2, D3)] == [by_delta_rs[d]["rows"] for d in (D1, D2, D3)] == [3, 3, 3]
    history = delta_rs.read(_path(lakes["spark"], "history")).to_pylist()
    versions = sorted((json.loads(r["_cdc_key"])[0], r["name"], r["_cdc_end_at"] is None) for r in history)
    assert versions == [
        ("a", "a1", False), ("a", "a2", False), ("a", "a3", False), ("a", "a4", True), ("b", "b1", True),
        ("c", "c1", True), (ODD, "o1", False), (ODD, "o2", False),
    ]  # fmt: skip
