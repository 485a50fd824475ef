"""Spark's tables replace a day's keys (`tables.replace_current`, `replace_history`): every version of
another day kept, whatever the keys' characters and however the event times run."""

import datetime as dt
import json

import pytest
from deltalake import DeltaTable
from pyspark.sql import functions as F

from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.store import table_root
from cdc_pipelines.snapshots.tables import key_predicate
from tests.lake.partitions import write_partitions
from tests.snapshots import delta_rs
from tests.snapshots.events import T0, changes_df, delete, insert, update

D1, D2 = "2024-01-01", "2024-01-02"
ODD = "q'\"\\x"  # a key with both quotes and a backslash
PK = ("code",)


def _row(code, name):
    return {"code": code, "name": name}


def _at(seconds):
    return T0 + dt.timedelta(seconds=seconds)


EVENTS = [
    insert(1, _row("a", "a1"), pk=PK), update(2, _row("a", "a1"), _row("a", "a2"), pk=PK),
    insert(3, _row(ODD, "o1"), pk=PK), insert(4, _row("b", "b1"), pk=PK),
    # day 2's times run a day before day 1's: the versions it ends end before `a`'s older one did
    update(1, _row("a", "a2"), _row("a", "a3"), pk=PK, day=D2, at=_at(-86400)),
    update(2, _row("a", "a3"), _row("a", "a4"), pk=PK, day=D2, at=_at(-86399)),
    delete(3, _row(ODD, "o1"), pk=PK, day=D2, at=_at(-86398)),
    insert(4, _row("c", "c1"), pk=PK, day=D2),
]  # fmt: skip


def _path(lake, kind):
    return join(table_root(lake / "snapshots", "db", None, "t"), kind)


def _operations(path):
    """Each commit's operation after the table's creation, a replacement by predicate as `WRITE WHERE`."""
    history = sorted(DeltaTable(path).history(), key=lambda c: c["version"])[1:]
    return [("WRITE WHERE" if c.get("operationParameters", {}).get("predicate") else c["operation"])
            if c["operation"] == "WRITE" else c["operation"] for c in history]  # fmt: skip


def _seconds(moment):
    return None if moment is None else int((moment.replace(tzinfo=None) - T0).total_seconds())


def test_a_days_keys_replaced_by_spark_keep_every_other_version(spark, tmp_path):
    write_partitions(changes_df(spark, EVENTS), tmp_path / "changes")
    with delta_rs.small_table_max_rows(spark, 0):
        days = snapshot_days(spark, tmp_path, [D1, D2])
    assert [days[d]["rows"] for d in (D1, D2)] == [3, 3]
    for kind in ("current", "history"):  # day 1 appended; day 2 replaced its keys' rows
        assert _operations(_path(tmp_path, kind)) == ["WRITE", "WRITE WHERE"]
    current = delta_rs.read(_path(tmp_path, "current")).to_pylist()
    assert sorted((r["code"], r["name"]) for r in current) == [("a", "a4"), ("b", "b1"), ("c", "c1")]
    history = delta_rs.read(_path(tmp_path, "history")).to_pylist()
    versions = sorted((json.loads(r["_cdc_key"])[0], r["name"], _seconds(r["_cdc_start_at"]),
                       _seconds(r["_cdc_end_at"])) for r in history)  # fmt: skip
    assert versions == [
        ("a", "a1", 1, 2), ("a", "a2", 2, -86400), ("a", "a3", -86400, -86399), ("a", "a4", -86399, None),
        ("b", "b1", 4, None), ("c", "c1", 4, None), (ODD, "o1", 3, -86398),
    ]  # fmt: skip
    delta_rs.assert_same_as_spark(spark, _path(tmp_path, "history"))


@pytest.mark.parametrize("raw", ["false", "true"])
def test_the_key_predicate_takes_exactly_the_keys_however_literals_are_parsed(spark, raw):
    keys = [ODD, '["a\\"b"]', "x'y\\%z", "\\u0041", "tab\tnew\nline"]
    frame = spark.createDataFrame([(k,) for k in [*keys, "A", "x'y%z"]], "_cdc_key string")
    spark.conf.set("spark.sql.parser.escapedStringLiterals", raw)
    try:
        taken = [r[0] for r in frame.where(F.expr(key_predicate(spark, keys))).collect()]
    finally:
        spark.conf.unset("spark.sql.parser.escapedStringLiterals")
    assert sorted(taken) == sorted(keys)
