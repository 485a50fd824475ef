"""fold_day gives apply_day's frames: generated days of every op, moved keys, TRUNCATEs, ties of time and
seq, keys live before the day or not, and a table without key columns; and a hand-written day as
changelog strings."""

import datetime as dt
import random

import pytest

from cdc_pipelines.snapshots import fold
from cdc_pipelines.snapshots.apply import apply_day, day_tables
from cdc_pipelines.snapshots.run import table_figures
from cdc_pipelines.snapshots.tables import KEY_LITERALS
from tests.snapshots.events import T0, change, changes_df, delete, insert, live_keys, truncate, update

FRAMES = ("net", "truncated", "opened", "closed", "anomalies", "live_before")


def _day(rng: random.Random) -> tuple[list[dict], dict]:
    """20-50 events over two tables, another database's table of one's name and a key-less one, on 6 keys,
    with times and seqs that tie, and some events without a time (they sort first)."""
    previous = {(t, (str(k),)): {} for t in ("t", "u") for k in range(6) if rng.random() < 0.4}
    events = []
    for n in range(rng.randint(20, 50)):
        table = rng.choice(("t", "t", "u", "nopk"))
        kw = {"table": table, "at": T0 + dt.timedelta(seconds=rng.randint(0, 8)),
              "seq": rng.choice((None, "9", "10", "009", "x"))}  # fmt: skip
        a, b = ({"id": str(rng.randrange(6)), "name": f"v{n}"} for _ in range(2))
        op = rng.choice(("insert", "update", "update", "delete", "truncate", "upsert"))
        if op != "truncate" and table == "nopk":
            kw["pk"] = None
        if op == "truncate":
            event = truncate(n, **kw)
        elif op == "update":
            event = update(n, b, a, **kw)
        else:
            event = delete(n, a, **kw) if op == "delete" else change(n, op.upper(), after=a, **kw)
        if rng.random() < 0.1:
            event["event_time"] = None
        if table == "u" and rng.random() < 0.3:
            event["db"] = "db2"
        events.append(event)
    return events, previous


def _rows(frame, columns=None):
    rows = frame.select(*(columns or frame.columns)).collect()
    return sorted(repr(sorted(r.asDict(recursive=True).items())) for r in rows)


@pytest.mark.parametrize("seed", range(5))
def test_the_driver_fold_gives_the_spark_fold(spark, seed):
    events, previous = _day(random.Random(seed))
    changes, keys = changes_df(spark, events), live_keys(spark, previous)
    tables, skipped = day_tables(changes)
    day = fold.collect_day(changes)
    driver_tables, driver_skipped = fold.day_tables(day)
    assert set(driver_tables) == set(tables) and driver_skipped == skipped and skipped
    spark_fold = apply_day(keys, changes, skipped=skipped)
    driver_fold = fold.fold_day(keys, day, skipped, spark_tables=())
    for name in FRAMES:
        assert _rows(getattr(driver_fold, name)) == _rows(getattr(spark_fold, name)), name
    columns = ["db", "db_schema", "table_name", "_t", "dt", "op", "event_id"]
    assert _rows(driver_fold.events) == _rows(spark_fold.events, columns)
    assert driver_fold.skipped == spark_fold.skipped
    assert sorted(map(repr, driver_fold.tables)) == sorted(map(repr, table_figures(spark_fold)))


def test_more_keys_than_literals(spark):
    """Above `KEY_LITERALS` keys the live keys are joined as local rows, and each table's key list is cut."""
    events = [insert(n, {"id": str(n), "name": "x"}) for n in range(KEY_LITERALS + 5)]
    previous = {("t", (str(n),)): {} for n in (3, 500, 1003)}
    changes, keys = changes_df(spark, events), live_keys(spark, previous)
    spark_fold = apply_day(keys, changes, skipped=[])
    driver_fold = fold.fold_day(keys, fold.collect_day(changes), [], spark_tables=())
    for name in ("live_before", "anomalies", "closed"):
        assert _rows(getattr(driver_fold, name)) == _rows(getattr(spark_fold, name)), name
    assert _rows(driver_fold.anomalies, ["event_id"]) == _rows(spark_fold.anomalies, ["event_id"]) != []
    [figures] = driver_fold.tables
    assert figures["keys"] == KEY_LITERALS + 5 and len(figures["key_list"]) == KEY_LITERALS + 1
    assert repr(figures) == repr(table_figures(spark_fold)[0])


def _changelog(applied):
    """`+t["2"] name` / `-t["1"]` per key's net effect, `~t["1"] 01..02` per version opened (seconds; open
    ended by `..`), `xu["4"] ..04` per version closed, `!kind n` per anomaly."""
    end = lambda at: f"{at:%S}" if at else ""  # noqa: E731
    net = [f"+{r.table_name}{r._k} {r.row['name']}" if r.kind == "set" else f"-{r.table_name}{r._k}"
           for r in applied.net.collect()]  # fmt: skip
    opened = [f"~{r.table_name}{r._k} {end(r._cdc_start_at)}..{end(r._cdc_end_at)}" for r in applied.opened.collect()]
    closed = [f"x{r.table_name}{r._k} ..{end(r._cdc_end_at)}" for r in applied.closed.collect()]
    anomalies = [f"!{r.kind} {r.event_id.rsplit('-', 1)[1]}" for r in applied.anomalies.collect()]
    return sorted(net) + sorted(opened) + sorted(closed) + sorted(anomalies)


def test_a_day_folded_in_the_driver(spark):
    row = {"id": "1", "name": "a"}
    events = [
        insert(1, row),
        update(2, row, {"id": "2", "name": "moved"}),  # key 1 -> 2
        delete(3, {"id": "3", "name": "gone"}),  # live before the day
        truncate(4, table="u"),
        insert(5, {"id": "1", "name": "again"}, table="u"),  # the table was emptied: not a duplicate
        insert(6, {"id": "2", "name": "dup"}),  # key 2 exists
        delete(7, {"id": "9", "name": "never"}),
    ]
    previous = {("t", ("3",)): {}, ("u", ("1",)): {}, ("u", ("4",)): {}}
    day = fold.collect_day(changes_df(spark, events))
    applied = fold.fold_day(live_keys(spark, previous), day, [], spark_tables=())
    assert _changelog(applied) == [
        '+t["2"] dup', '+u["1"] again', '-t["1"]', '-t["3"]', '-t["9"]',
        '~t["1"] 01..02', '~t["2"] 02..06', '~t["2"] 06..', '~u["1"] 05..',
        'xt["3"] ..03', 'xu["1"] ..04', 'xu["4"] ..04',
        "!delete_of_missing_key 7", "!insert_of_existing_key 6",
    ]  # fmt: skip
    assert [r.table_name for r in applied.truncated.collect()] == ["u"]
    assert applied.events.count() == len(events)
    # a TRUNCATE of a table whose keys Spark reads: left to apply_day
    assert fold.fold_day(live_keys(spark, previous), day, [], spark_tables={("db", None, "u")}) is None
