"""snapshot_days on a small lake: typed current and history tables, types that only widen, anomalies
kept, versions recorded per day, reruns exact, backfills re-applied."""

import datetime as dt
import io
import json
import shutil

import pyarrow as pa
import pytest

from cdc_pipelines.engines.spark import SparkEngine
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import apply, day_steps, run, small_tables, snapshot_days
from cdc_pipelines.snapshots.as_of import print_as_of
from cdc_pipelines.snapshots.report import snapshot_report
from cdc_pipelines.snapshots.schema import LATE_DETAIL
from cdc_pipelines.snapshots.store import ANOMALIES, APPLIED, DDL, read_summary, table_root
from tests.lake.partitions import write_partitions
from tests.snapshots import delta_rs
from tests.snapshots.events import change, changes_df, delete, insert, update

D1, D2, D3 = "2024-01-01", "2024-01-02", "2024-01-03"
BIG = "10223372036854775806"


def _row(i, name, amount="1.50", flag="true"):
    return {"id": str(i), "name": name, "amount": amount, "flag": flag}


def _lake(spark, tmp_path, events):
    write_partitions(changes_df(spark, events), tmp_path / "lake" / "changes")
    return tmp_path / "lake"


def _path(lake, table="t", kind="current"):
    return join(table_root(lake / "snapshots", "db", None, table), kind)


def _table(spark, lake, table="t", kind="current", version=None):
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return reader.load(_path(lake, table, kind))


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
CDC = {"_cdc_op": "string", "_cdc_event_time": "timestamp", "_cdc_event_id": "string", "_cdc_key": "string"}


# `fresh` is new on day 2: its first day has nothing to match (see `_check_nothing_to_match`)
FRESH = insert(9, _row(5, "new"), table="fresh", day=D2)


def _check_two_days(lake, days):
    """Two days applied in one call: current and history typed, types only widen, anomalies kept,
    versions recorded per day."""
    assert list(days) == [D1, D2]
    assert {k: days[D1][k] for k in ("tables", "rows", "applied", "anomalies")} == {
        "tables": 3, "rows": 4, "applied": 4, "anomalies": 0,
    }  # fmt: skip
    assert (days[D2]["rows"], days[D2]["anomalies"], days[D2]["previous_dt"]) == (4, 2, D1)  # t, wide, bad, fresh

    types = delta_rs.types(_path(lake))
    assert types == {
        "id": "bigint", "amount": "decimal(29,9)", "flag": "boolean", "name": "string", "extra": "bigint", **CDC,
    }  # fmt: skip
    assert list(types)[0] == "id" and list(types)[-1] == "extra"  # key first; a column a later day adds, last
    rows = [(r["id"], r["name"], str(r["amount"]), r["flag"], r["extra"], r["_cdc_op"], r["_cdc_key"])
            for r in delta_rs.rows(_path(lake))]  # fmt: skip
    assert rows == [(1, "a2", "1.500000000", True, 7, "UPDATE", '["1"]')]  # types never narrow
    history = sorted((r["id"], r["name"], r["extra"], r["_cdc_op"], r["_cdc_end_at"] is None)
                     for r in delta_rs.rows(_path(lake, kind="history")))  # fmt: skip
    assert history == [(1, "a", None, "INSERT", False), (1, "a2", 7, "UPDATE", True), (2, "b", None, "INSERT", False)]
    assert delta_rs.types(_path(lake, "wide"))["id"] == "decimal(38,0)"
    assert delta_rs.types(_path(lake, "bad"))["flag"] == "string"
    assert [r["flag"] for r in delta_rs.rows(_path(lake, "bad"))] == ["maybe"]
    anomalies = [a for a in delta_rs.rows(lake / "snapshots" / ANOMALIES) if a["dt"] == D2]
    assert sorted((a["table_name"], a["kind"], a["event_id"]) for a in anomalies) == [
        ("bad", "cast_failed", f"e{D2}-3"), ("bad", "insert_of_existing_key", f"e{D2}-3"),
    ]  # fmt: skip
    ddl = delta_rs.rows(lake / "snapshots" / DDL)
    assert [(r["table_name"], r["ddl"], str(r["dt"])) for r in ddl] == [("t", "ALTER TABLE t ADD COLUMN extra int", D1)]
    summary = json.loads((lake / "snapshots" / "_runs" / f"dt={D2}" / "summary.json").read_text())
    assert summary["per_table"]["db.bad"]["anomalies"] == {"cast_failed": 1, "insert_of_existing_key": 1}
    t1, t2 = days[D1]["per_table"]["db.t"], summary["per_table"]["db.t"]
    assert t2["current"] == _path(lake)
    assert t2["current_version"] > t1["current_version"] and t2["history"].endswith("/history")
    assert len(delta_rs.rows(_path(lake), version=t1["current_version"])) == 2  # day 1's state, by version


def _state(lake, tables=("t", "bad", "wide")):
    """Every table's current and history rows, and their columns' types."""
    return {(table, kind): delta_rs.table_state(_path(lake, table, kind)) for table in tables
            for kind in ("current", "history")}  # fmt: skip


def _check_nothing_to_match(lake, days):
    """A day with nothing to match is appended in one file; a day that changes live keys is a MERGE.
    Each day's commit is found by the version the day's summary records for the table."""

    def commits(day, table):
        entry = days[day]["per_table"][f"db.{table}"]
        return [delta_rs.commit(_path(lake, table, kind), entry[f"{kind}_version"]) for kind in ("current", "history")]

    # a first day: nothing to match, the rows appended, all of them in one file (optimized writes)
    assert commits(D1, "t") == [("WRITE", 1)] * 2
    # day 2 changes live keys of `t`: a MERGE; `fresh` is new that day: appended
    assert [op for op, _ in commits(D2, "t")] == ["MERGE"] * 2
    assert [op for op, _ in commits(D2, "fresh")] == ["WRITE"] * 2
    assert [r["name"] for r in delta_rs.rows(_path(lake, "fresh"))] == ["new"]


def _crash(*args, **kwargs):
    raise RuntimeError("crashed")


def test_two_days_then_rerun_and_backfill_equal_a_clean_run(snapshot_engine, tmp_path):
    """One lake of two days serves three checks that each used to build it: the two days' tables and
    summaries (day 2 after a run of it that failed part way), the commits of a day with nothing to match,
    then reruns and backfills of it."""
    engine = snapshot_engine
    lake = engine.lake(tmp_path, DAY1 + DAY2 + [FRESH])
    days = engine.days(lake, [D1])
    # day 2 fails after its tables' MERGEs committed, before its versions were recorded: no summary, so
    # its rerun is a first run of the day, which must not apply them twice (the history would double)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(day_steps, "record", _crash)  # both engines' days record their versions there
        with pytest.raises(RuntimeError, match="crashed"):
            engine.days(lake, [D2])
    days |= engine.days(lake, [D2])
    _check_two_days(lake, days)
    _check_nothing_to_match(lake, days)
    clean = _state(lake)
    again = engine.days(lake, [D2])  # a plain rerun of the last day
    assert list(again) == [D2] and again[D2]["anomalies"] == 2 and _state(lake) == clean
    # a backfill with the same events, of a copy of the lake: nothing late, and the copy restores its own
    # tables, not those at the paths its `_versions` recorded (the original's)
    moved = tmp_path / "moved"
    shutil.copytree(lake, moved)
    logs = sorted(str(p) for p in (lake / "snapshots").rglob("_delta_log/*.json"))
    again = engine.days(moved, [D1])
    assert list(again) == [D1, D2] and again[D1]["anomalies"] == 0 and again[D2]["anomalies"] == 2
    assert _state(moved) == clean and sorted(str(p) for p in (lake / "snapshots").rglob("_delta_log/*.json")) == logs
    assert again[D2]["per_table"]["db.t"]["current"] == _path(moved)
    if engine.spark is not None:  # and Spark reads the backfilled tables as delta-rs does
        for table in ("t", "bad", "wide"):
            for kind in ("current", "history"):
                delta_rs.assert_same_as_spark(engine.spark, _path(moved, table, kind))
    again = engine.days(lake, [D1])
    assert _state(lake) == clean
    # day 1 is re-decoded with one more event: it is late, and day 2 is applied on top of it again
    late = insert(9, _row(9, "late"), at=dt.datetime(2024, 1, 1, 23))
    engine.write_changes(lake / "changes", [*DAY1, late])
    days = engine.days(lake, [D1])
    assert days[D1]["per_table"]["db.t"]["anomalies"] == {"late_event": 1}
    assert sorted(r["id"] for r in delta_rs.rows(_path(lake))) == [1, 9]
    fresh = engine.lake(tmp_path / "fresh", [*DAY1, late, *DAY2, FRESH])
    if engine.spark is not None:  # the clean run folded by Spark, the lake's days in the driver
        engine.spark.conf.set(apply.MAX_EVENTS_SETTING, "0")
    try:
        engine.days(fresh, [D1, D2])
    finally:
        if engine.spark is not None:
            engine.spark.conf.unset(apply.MAX_EVENTS_SETTING)
    assert _state(lake) == _state(fresh)
    # day 2 re-decoded without the event of its two anomalies: its rerun empties them, not skips them
    engine.write_changes(lake / "changes", DAY2[:2])
    assert engine.days(lake, [D2])[D2]["anomalies"] == 0
    assert [a for a in delta_rs.rows(lake / "snapshots" / ANOMALIES) if a["dt"] == D2] == []


def test_late_events_are_those_a_backfill_applies_that_the_run_before_did_not(snapshot_engine, tmp_path, monkeypatch):
    """Day 1 re-decoded with two more events after day 2 was applied: its backfill reports those two, each
    with its table and op, and not the events its run before applied; a second backfill of the same events
    reports none. On Spark, the day in the driver with Spark writing the datasets, and the day Spark folds
    (the rule per group of a cogroup, a group per two events) with the datasets by delta-rs, then by Spark."""
    engine = snapshot_engine
    day1 = [insert(1, _row(1, "a")), insert(2, _row(2, "b")), insert(3, {"id": "1"}, table="u")]
    late = [insert(4, _row(3, "c"), table="u", at=dt.datetime(2024, 1, 1, 23)),
            delete(5, _row(2, "b"), at=dt.datetime(2024, 1, 1, 23, 1))]  # fmt: skip
    monkeypatch.setattr(run, "LATE_GROUP_EVENTS", 2)
    # (the most events of a day folded in the driver, the most rows of a dataset delta-rs writes)
    ways = [(None, None)] if engine.spark is None else [("100", "0"), ("0", None), ("0", "0")]
    for n, (driver, small) in enumerate(ways):
        for key, value in ((apply.MAX_EVENTS_SETTING, driver), (small_tables.MAX_ROWS_SETTING, small)):
            if value is not None:
                engine.spark.conf.set(key, value)
        try:
            lake = engine.lake(tmp_path / str(n), [*day1, update(1, _row(1, "a"), _row(1, "a2"), day=D2)])
            engine.days(lake, [D1, D2])
            engine.write_changes(lake / "changes", [*day1, *late])
            days = engine.days(lake, [D1])
            assert list(days) == [D1, D2] and days[D1]["anomalies"] == 2, (driver, small)
            anomalies = [a for a in delta_rs.rows(lake / "snapshots" / ANOMALIES) if a["dt"] == D1]
            assert sorted((a["table_name"], a["kind"], a["event_id"], a["op"], a["detail"]) for a in anomalies) == [
                ("t", "late_event", f"e{D1}-5", "DELETE", LATE_DETAIL),
                ("u", "late_event", f"e{D1}-4", "INSERT", LATE_DETAIL),
            ], (driver, small)  # fmt: skip
            applied = [r["event_id"] for r in delta_rs.rows(lake / "snapshots" / APPLIED) if r["dt"] == D1]
            assert sorted(applied) == [f"e{D1}-{i}" for i in range(1, 6)]
            assert sorted(r["id"] for r in delta_rs.rows(_path(lake))) == [1]
            if n == len(ways) - 1:  # the same events again (once, by the last way): none of them late now
                again = engine.days(lake, [D1])
                assert again[D1]["anomalies"] == 0 and again[D1]["per_table"]["db.t"]["anomalies"] == {}
                assert [a for a in delta_rs.rows(lake / "snapshots" / ANOMALIES) if a["dt"] == D1] == []
        finally:
            for key, value in ((apply.MAX_EVENTS_SETTING, driver), (small_tables.MAX_ROWS_SETTING, small)):
                if value is not None:
                    engine.spark.conf.unset(key)


def test_local_rows_reach_spark_whole_whatever_their_chunks(spark):
    """Spark 4.2 reads no rows of a table past an empty batch after its first: a filtered or concatenated table
    (the in-driver day's anomalies, a Spark table's own rows) has such batches; `apply.local_frame` and the
    datasets Spark writes from rows held here (`store.replace_local_day`) give it them as one chunk."""
    rows = pa.table({"a": ["x", "y"]})
    chunked = pa.concat_tables([rows.slice(0, 0), rows.slice(0, 0), rows, rows.slice(0, 0), rows])
    assert sorted(r.a for r in apply.local_frame(spark, chunked, "a string").collect()) == ["x", "x", "y", "y"]


def test_each_day_is_folded_in_the_driver_by_its_own_events(spark, tmp_path, monkeypatch):
    """The driver's fold is chosen per day: day 1's 5 events are over a limit of 4, day 2's 3 are not."""
    lake = _lake(spark, tmp_path, DAY1 + DAY2)
    collected = []
    fold_local = apply.fold_local
    monkeypatch.setattr(apply, "fold_local", lambda *args: collected.append(1) or fold_local(*args))
    spark.conf.set(apply.MAX_EVENTS_SETTING, "4")
    try:
        days = snapshot_days(spark, lake, [D1, D2])
    finally:
        spark.conf.unset(apply.MAX_EVENTS_SETTING)
    assert len(collected) == 1 and (days[D2]["rows"], days[D2]["anomalies"]) == (3, 2)


def test_a_failed_day_of_spark_tables_whose_history_alone_committed_is_applied_once(spark, tmp_path):
    """Spark commits no empty append: a day whose only new key is inserted and deleted commits the history
    (one closed version) and not the current table. Failed after that, its rerun restores the history."""
    lake = _lake(spark, tmp_path, [
        insert(1, _row(1, "a")), insert(2, _row(2, "b"), day=D2), delete(3, _row(2, "b"), day=D2),
    ])  # fmt: skip
    with delta_rs.small_table_max_rows(spark, 0):
        snapshot_days(spark, lake, [D1])
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(day_steps, "record", _crash)
            with pytest.raises(RuntimeError, match="crashed"):
                snapshot_days(spark, lake, [D2])
        snapshot_days(spark, lake, [D2])
    history = sorted((r.id, r._cdc_op, r._cdc_end_at is None) for r in _table(spark, lake, kind="history").collect())
    assert history == [(1, "INSERT", True), (2, "INSERT", False)]
    assert [r.id for r in _table(spark, lake).collect()] == [1]


def test_types_only_widen_and_delta_rs_reads_every_day(snapshot_engine, tmp_path):
    events = [
        insert(1, {"id": "1", "extra": "5"}),  # an INT column
        insert(2, {"id": "2", "extra": "6"}),
        insert(7, {"id": "9", "extra": "8"}),  # never touched: its file keeps it, a deletion vector hides the rest
        insert(3, {"id": "3", "extra": "1" * 25}, day=D2),  # beyond a long: decimal(38,0)
        update(4, {"id": "1", "extra": "5"}, {"id": "1", "extra": "7"}, day=D2),  # after the rewrite: deletion
        delete(5, {"id": "2", "extra": "6"}, day=D2),  # vectors on the widened table
        insert(6, {"id": "4", "extra": "9" * 40}, day=D3),  # beyond decimal(38): text, the earlier values as text
    ]
    engine = snapshot_engine
    lake = engine.lake(tmp_path, events)
    folder = table_root(lake / "snapshots", "db", None, "t")
    types, rows = [], []
    for day in (D1, D2, D3):
        with engine.spark_writes_every_table():  # on Spark, its MERGEs with deletion vectors
            engine.days(lake, [day])
        types.append(delta_rs.types(join(folder, "current"))["extra"])
        paths = [join(folder, kind) for kind in ("current", "history")]
        if engine.spark is not None:
            rows.append([delta_rs.assert_same_as_spark(engine.spark, path) for path in paths])
        else:
            rows.append([len(delta_rs.rows(path)) for path in paths])
    assert types == ["bigint", "decimal(38,0)", "string"]
    assert rows == [[3, 3], [3, 5], [4, 6]]
    # Spark's tables mark the rows a MERGE removes; delta-rs's rewrite the few files a day touches
    assert [delta_rs.has_deletion_vectors(join(folder, kind)) for kind in ("current", "history")] == [
        engine.spark is not None
    ] * 2
    assert sorted(r["extra"] for r in delta_rs.rows(join(folder, "current"))) == ["1" * 25, "7", "8", "9" * 40]
    history = sorted(r["extra"] for r in delta_rs.rows(join(folder, "history")))
    assert history == ["1" * 25, "5", "6", "7", "8", "9" * 40]


def test_a_table_without_keys_is_skipped_whole_unless_keys_are_given(snapshot_engine, tmp_path):
    events = [insert(1, {"k": "1"}, table="heap", pk=None), insert(2, {"k": "2"}, table="heap", pk=None)]
    lake = snapshot_engine.lake(tmp_path, events)
    days = snapshot_engine.days(lake, [D1])
    assert days[D1]["skipped_tables"] == [
        {"table": "db.heap", "db": "db", "db_schema": None, "table_name": "heap", "reason": "no primary-key columns",
         "events": 2}
    ]  # fmt: skip
    assert days[D1]["tables"] == 0 and not (lake / "snapshots" / "db=db" / "table=heap").exists()
    days = snapshot_engine.days(lake, [D1], keys={"db.heap": ["k"]})
    assert days[D1]["skipped_tables"] == [] and days[D1]["tables"] == 1
    assert sorted(r["k"] for r in delta_rs.rows(_path(lake, "heap"))) == ["1", "2"]


def test_a_snapshot_root_given_as_a_uri(spark, tmp_path):
    """A `file:` URI root goes through Spark and Hadoop's FileSystem as `s3a://` would: tables, versions,
    summaries (written whole: a hidden file renamed), applied days, a rerun, `--as-of` and the report."""
    lake = _lake(spark, tmp_path, [insert(1, _row(1, "a")), insert(2, _row(2, "b")), delete(3, _row(2, "b"), day=D2)])
    root = f"file://{tmp_path}/snaps"
    days = snapshot_days(spark, lake, [D1, D2], out=root)
    named = f"file:{tmp_path}/snaps"  # as Hadoop names it
    assert [(d["path"], d["rows"]) for d in days.values()] == [(named, 2), (named, 1)]
    current = days[D2]["per_table"]["db.t"]["current"]
    assert current == f"{named}/db=db/table=t/current" and spark.read.format("delta").load(current).count() == 1
    assert read_summary(root, D1)["rows"] == 2 and read_summary(root, "2024-01-09") is None
    assert sorted(p.name for p in (tmp_path / "snaps" / "_runs" / f"dt={D2}").iterdir()) == [
        ".summary.json.crc", "summary.json"
    ]  # fmt: skip
    assert list(snapshot_days(spark, lake, [D2], out=root)) == [D2]  # a rerun: D1 was applied
    stream = io.StringIO()
    assert print_as_of(spark, lake, D1, stream, out=root)["tables"]["db.t"]["rows"] == 2
    assert snapshot_report(SparkEngine(spark), root, D2)["rows"] == 1


def test_a_schema_change_under_exception_applies_nothing_of_its_day(snapshot_engine, tmp_path):
    """Day 2 adds a column: under `exception` it fails before any write, in either of Spark's folds (in this
    process, in `mapInArrow`); day 1 and the DDL of another topic are left alone; `lenient` then applies it."""
    from cdc_pipelines.schema_changes.policy import SchemaChangeRefused

    engine = snapshot_engine
    ddl = change(3, "DDL", day=D2) | {"ddl": "ALTER TABLE t ADD COLUMN extra INT", "pk_columns": None}
    lake = engine.lake(tmp_path, [*DAY1[:4], insert(4, _row(7, "g") | {"extra": "1"}, day=D2), ddl])
    engine.days(lake, [D1], schema_changes="exception")
    for limit in ("100", "0") if engine.spark is not None else (None,):
        if limit is not None:
            engine.spark.conf.set(apply.MAX_EVENTS_SETTING, limit)
        try:
            with pytest.raises(SchemaChangeRefused, match="event e2024-01-02-3"):
                engine.days(lake, [D2], schema_changes="exception")
        finally:
            if limit is not None:
                engine.spark.conf.unset(apply.MAX_EVENTS_SETTING)
        assert read_summary(lake / "snapshots", D2) is None
        assert [r["dt"] for r in delta_rs.rows(lake / "snapshots" / DDL)] == []
    assert engine.days(lake, [D2], schema_changes={"other": "exception"})[D2]["rows"] > 0


def test_a_ddl_no_parser_reads_is_kept_with_its_reason_and_the_days_rows_still_apply(snapshot_engine, tmp_path):
    """Under `lenient` a DDL that cannot be read is a `ddl_unread` anomaly with its event id and reason, and
    its `_ddl` row says why; a DDL read whole has none; the day's rows are applied all the same."""
    unread = change(2, "DDL", pk=None) | {"ddl": "ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4"}
    read = change(3, "DDL", pk=None) | {"ddl": "ALTER TABLE t ADD COLUMN extra int"}
    lake = snapshot_engine.lake(tmp_path, [insert(1, _row(1, "a")), unread, read, insert(4, _row(2, "b"))])
    day = snapshot_engine.days(lake, [D1])[D1]
    assert (day["rows"], day["anomalies"], day["per_table"]["db.t"]["anomalies"]) == (2, 1, {"ddl_unread": 1})
    why = "ALTER TABLE clause 'PARTITION BY HASH(id) PARTITIONS 4' is not read"
    anomalies = delta_rs.rows(lake / "snapshots" / ANOMALIES)
    assert [(a["kind"], a["event_id"], a["op"], a["detail"]) for a in anomalies] == [
        ("ddl_unread", f"e{D1}-2", "DDL", f"{why}: ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4")
    ]
    ddl = sorted(delta_rs.rows(lake / "snapshots" / DDL), key=lambda r: r["event_id"])
    assert [(r["event_id"], r["unread"] and r["unread"].split(":")[0]) for r in ddl] == [
        (f"e{D1}-2", why),
        (f"e{D1}-3", None),
    ]
