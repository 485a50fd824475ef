"""The fold of a day, one body on each engine: generated days of every op, moved keys, TRUNCATEs, ties of
time and seq, keys live before the day or not, and a table without key columns, folded alike by both; a
hand-written day as changelog strings; and the figures' key list cut past `KEY_LITERALS`."""

import datetime as dt
import random

import pytest

from cdc_pipelines.snapshots.fold import KEY_LITERALS
from cdc_pipelines.snapshots.spark_tables import live_among
from tests.snapshots.events import T0, change, delete, insert, live_keys, truncate, update
from tests.snapshots.folds import fold_local, fold_spark

FRAMES = ("net", "opened", "closed", "anomalies", "live_before")


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


def _sorted(rows) -> list[str]:
    plain = lambda v: sorted(v.items()) if isinstance(v, dict) else v  # noqa: E731
    return sorted(repr(sorted((k, plain(v)) for k, v in vars(r).items())) for r in rows)


@pytest.mark.spark
@pytest.mark.parametrize("seed", range(5))
def test_both_engines_fold_a_day_alike(spark, seed):
    events, previous = _day(random.Random(seed))
    local, on_spark = fold_local(events, previous), fold_spark(spark, events, previous)
    for name in FRAMES:
        assert _sorted(getattr(local, name)) == _sorted(getattr(on_spark, name)), name
    assert local.skipped == on_spark.skipped and local.skipped
    assert local.events == on_spark.events
    assert sorted(map(repr, local.tables)) == sorted(map(repr, on_spark.tables))


def test_more_keys_than_literals(fold_day):
    """Each table's key list is cut at `KEY_LITERALS` + 1 keys, the least."""
    events = [insert(n, {"id": str(n), "name": "x"}) for n in range(KEY_LITERALS + 5)]
    previous = {("t", (str(n),)): {} for n in (3, 500, 1003)}
    applied = fold_day(events, previous)
    assert sorted(a.event_id for a in applied.anomalies) == ["e2024-01-01-1003", "e2024-01-01-3", "e2024-01-01-500"]
    [figures] = applied.tables
    assert figures["keys"] == KEY_LITERALS + 5 and len(figures["key_list"]) == KEY_LITERALS + 1
    assert figures["key_list"] == sorted(figures["key_list"]) and figures["key_list"][0] == '["0"]'


@pytest.mark.spark
def test_live_keys_past_the_literals_are_joined(spark):
    """Past `KEY_LITERALS` touched keys the live keys are joined as local rows, not named."""
    previous = {("t", (str(n),)): {} for n in range(KEY_LITERALS + 10)}
    live = live_keys(spark, previous)
    t = '["db",null,"t"]'
    touched = {(t, f'["{n}"]') for n in range(0, KEY_LITERALS + 10, 2)}
    assert sorted(live_among(live, touched, set())["_k"].to_pylist()) == sorted(k for _, k in touched)
    assert live_among(live, {(t, '["1"]')}, set())["_k"].to_pylist() == ['["1"]']
    assert live_among(live, set(), {t}).num_rows == KEY_LITERALS + 10


def _changelog(applied):
    """`+t["2"] name` / `-t["1"]` per key's net effect, `~t["1"] 01..02` per version opened (seconds; open
    ended by `..`), `xu["4"] ..04` per version closed, `!kind n` per anomaly."""
    end = lambda at: f"{at:%S}" if at else ""  # noqa: E731
    net = [f"+{r.table_name}{r._k} {r.row['name']}" if r.kind == "set" else f"-{r.table_name}{r._k}"
           for r in applied.net]  # fmt: skip
    opened = [f"~{r.table_name}{r._k} {end(r._cdc_start_at)}..{end(r._cdc_end_at)}" for r in applied.opened]
    closed = [f"x{r.table_name}{r._k} ..{end(r._cdc_end_at)}" for r in applied.closed]
    anomalies = [f"!{r.kind} {r.event_id.rsplit('-', 1)[1]}" for r in applied.anomalies]
    return sorted(net) + sorted(opened) + sorted(closed) + sorted(anomalies)


def test_a_day_folded(fold_day):
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
    applied = fold_day(events, previous)
    assert _changelog(applied) == [
        '+t["2"] dup', '+u["1"] again', '-t["1"]', '-t["3"]', '-t["9"]',
        '~t["1"] 01..02', '~t["2"] 02..06', '~t["2"] 06..', '~u["1"] 05..',
        'xt["3"] ..03', 'xu["1"] ..04', 'xu["4"] ..04',
        "!delete_of_missing_key 7", "!insert_of_existing_key 6",
    ]  # fmt: skip
    assert [t["table_name"] for t in applied.tables if t["truncated"]] == ["u"]
    assert applied.events == len(events)
