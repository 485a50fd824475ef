"""snapshot_days on a small lake: typed per-table Parquet, anomalies kept, reruns exact, backfills re-applied."""

import datetime as dt
import json

import pytest
from pyspark.sql import functions as F

from cdc_pipelines.lake.io import write_partitions
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.store import ANOMALIES, DDL, table_root
from tests.snapshots.events import change, changes_df, delete, insert, update

D1, D2 = "2024-01-01", "2024-01-02"
BIG = "10223372036854775806"


def _row(i, name, amount="1.50", flag="true"):
    return {"id": str(i), "name": name, "amount": amount, "flag": flag}


def _lake(spark, tmp_path, events):
    write_partitions(changes_df(spark, events), tmp_path / "lake" / "changes")
    return tmp_path / "lake"


def _table(spark, lake, day, table="t"):
    return spark.read.parquet(str(table_root(lake / "snapshots", "db", None, table) / f"dt={day}"))


DAY1 = [
    insert(1, _row(1, "a")),
    insert(2, _row(2, "b", amount="12345678901234567890.123456789")),
    insert(3, {"id": BIG, "name": "big"}, table="wide"),
    insert(4, {"id": "1", "name": "x"}, table="bad"),
    change(5, "DDL", table="t", pk=None) | {"ddl": "ALTER TABLE t ADD COLUMN extra int"},
]
DAY2 = [
    update(1, _row(1, "a"), _row(1, "a2") | {"extra": "7"}, day=D2),
    delete(2, _row(2, "b"), day=D2),
    insert(3, {"id": "1", "flag": "maybe"}, table="bad", day=D2),  # not a BOOLEAN: an anomaly, kept as text
]


def test_two_days_typed_output_and_summary(spark, tmp_path):
    lake = _lake(spark, tmp_path, DAY1 + DAY2)
    days = snapshot_days(spark, lake, [D1, D2])
    assert list(days) == [D1, D2]
    assert {k: days[D1][k] for k in ("tables", "rows", "applied", "anomalies")} == {
        "tables": 3, "rows": 4, "applied": 4, "anomalies": 0,
    }  # fmt: skip
    assert (days[D2]["rows"], days[D2]["anomalies"], days[D2]["previous_dt"]) == (3, 2, D1)

    t1 = _table(spark, lake, D1)
    assert dict(t1.dtypes) == {
        "id": "bigint", "amount": "decimal(29,9)", "flag": "boolean", "name": "string",
        "_cdc_op": "string", "_cdc_event_time": "timestamp", "_cdc_event_id": "string",
    }  # fmt: skip
    assert t1.columns[0] == "id"
    t2 = _table(spark, lake, D2).collect()
    assert [(r.id, r.name, str(r.amount), r.flag, r.extra, r._cdc_op) for r in t2] == [
        (1, "a2", "1.50", True, 7, "UPDATE")  # decimal(3,2) now; the column the DDL added shows up with its value
    ]
    assert dict(_table(spark, lake, D1, "wide").dtypes)["id"] == "decimal(38,0)"
    bad = _table(spark, lake, D2, "bad")
    assert dict(bad.dtypes)["flag"] == "string" and bad.first().flag == "maybe"
    anomalies = spark.read.format("delta").load(str(lake / "snapshots" / ANOMALIES)).where(F.col("dt") == D2)
    assert sorted((a.table_name, a.kind, a.event_id) for a in anomalies.collect()) == [
        ("bad", "cast_failed", f"e{D2}-3"), ("bad", "insert_of_existing_key", f"e{D2}-3"),
    ]  # fmt: skip
    ddl = spark.read.format("delta").load(str(lake / "snapshots" / DDL)).collect()
    assert [(r.table_name, r.ddl, str(r.dt)) for r in ddl] == [("t", "ALTER TABLE t ADD COLUMN extra int", D1)]
    summary = json.loads((lake / "snapshots" / "_runs" / f"dt={D2}" / "summary.json").read_text())
    assert summary["per_table"]["db.bad"]["anomalies"] == {"cast_failed": 1, "insert_of_existing_key": 1}


def test_backfill_of_an_old_day_reapplies_the_later_days(spark, tmp_path):
    lake = _lake(spark, tmp_path, DAY1 + DAY2)
    snapshot_days(spark, lake, [D1, D2])
    again = snapshot_days(spark, lake, [D1])  # a plain rerun: same events, nothing late
    assert list(again) == [D1, D2] and again[D1]["anomalies"] == 0 and again[D2]["anomalies"] == 2
    # day 1 is re-decoded with one more event: it is late, and day 2 is applied on top of it again
    late = insert(9, _row(9, "late"), at=dt.datetime(2024, 1, 1, 23))
    write_partitions(changes_df(spark, [*DAY1, late]), lake / "changes")
    days = snapshot_days(spark, lake, [D1])
    assert days[D1]["per_table"]["db.t"]["anomalies"] == {"late_event": 1}
    assert sorted(r.id for r in _table(spark, lake, D2).collect()) == [1, 9]


def test_a_table_without_keys_is_skipped_whole(spark, tmp_path):
    events = [insert(1, {"k": "1"}, table="heap", pk=None), insert(2, {"k": "2"}, table="heap", pk=None)]
    days = snapshot_days(spark, _lake(spark, tmp_path, events), [D1])
    assert days[D1]["skipped_tables"] == [
        {"table": "db.heap", "db": "db", "db_schema": None, "table_name": "heap", "reason": "no primary-key columns",
         "events": 2}
    ]  # fmt: skip
    assert days[D1]["tables"] == 0
    with pytest.raises(Exception, match="PATH_NOT_FOUND|does not exist"):
        _table(spark, tmp_path / "lake", D1, "heap").count()
