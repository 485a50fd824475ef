"""A day's fold on hand-written days, on each engine: every op, key changes, TRUNCATE, order ties,
anomalies, no-PK tables, configured keys, and the versions (history) a day opens and closes."""

import datetime as dt

from tests.snapshots.events import T0, delete, folded, insert, truncate, update


def _row(i, name):
    return {"id": str(i), "name": name}


def _apply(fold_day, events, previous=None, keys=None):
    previous = previous or {}
    result = fold_day(events, previous, keys)
    anomalies = sorted((a.kind, a.event_id) for a in result.anomalies)
    return result, folded(previous, result), anomalies


def test_ops_key_change_and_anomalies(fold_day):
    events = [
        insert(1, _row(1, "a")),
        insert(2, _row(2, "b")),
        update(3, _row(1, "a"), _row(1, "a2")),
        update(4, _row(2, "b"), _row(5, "b-moved")),  # key 2 -> 5
        delete(5, _row(9, "never")),  # unknown key
        insert(6, _row(1, "dup")),  # key 1 exists
        update(7, _row(7, "x"), _row(7, "y")),  # unknown key
        insert(8, _row(3, "c")),
        delete(9, _row(3, "c")),
        insert(10, {"k": "1"}, table="nopk", pk=None),  # no key columns: the table is skipped
    ]
    result, state, anomalies = _apply(fold_day, events)
    assert state == {("t", ("1",)): _row(1, "dup"), ("t", ("5",)): _row(5, "b-moved"), ("t", ("7",)): _row(7, "y")}
    assert anomalies == [
        ("delete_of_missing_key", "e2024-01-01-5"),
        ("insert_of_existing_key", "e2024-01-01-6"),
        ("update_of_missing_key", "e2024-01-01-7"),
    ]
    assert [(s["table_name"], s["reason"], s["events"]) for s in result.skipped] == [
        ("nopk", "no primary-key columns", 1)
    ]
    last = {r._k: (r.kind, r._cdc_op, r._cdc_event_id) for r in result.net}
    assert last['["5"]'] == ("set", "UPDATE", "e2024-01-01-4") and last['["1"]'] == ("set", "INSERT", "e2024-01-01-6")
    assert last['["3"]'][0] == last['["2"]'][0] == last['["9"]'][0] == "del"


def test_previous_day_truncate_and_reinsert(fold_day):
    _, day1, _ = _apply(
        fold_day, [insert(1, _row(1, "a")), insert(2, _row(2, "b")), insert(3, _row(1, "x"), table="u")]
    )
    day2 = [
        update(1, _row(2, "b"), _row(2, "b2"), day="2024-01-02"),
        truncate(2, day="2024-01-02"),
        insert(3, _row(1, "new"), day="2024-01-02"),  # the table was emptied: not a duplicate
        delete(4, _row(2, "b2"), day="2024-01-02"),  # gone with the truncate
    ]
    _, state, anomalies = _apply(fold_day, day2, previous=day1)
    assert state == {("t", ("1",)): _row(1, "new"), ("u", ("1",)): _row(1, "x")}
    assert anomalies == [("delete_of_missing_key", "e2024-01-02-4")]


def test_order_is_time_then_numeric_seq_then_lineage(fold_day):
    at = dt.datetime(2024, 1, 1, 12)
    events = [  # listed out of order; same time, seq 10 after seq 9, ties broken by source_line
        update(1, _row(1, "s9"), _row(1, "s10"), seq="10", at=at),
        insert(2, _row(1, "s9"), seq="9", at=at),
        update(3, _row(2, "l3"), _row(2, "l4"), seq="5", at=at),
        insert(0, _row(2, "l3"), seq="5", at=at),
        insert(4, _row(3, "late"), at=at + dt.timedelta(seconds=1)),
        delete(5, _row(3, "late"), at=at - dt.timedelta(seconds=1)),  # earlier: the key did not exist yet
    ]
    _, state, anomalies = _apply(fold_day, events)
    assert state == {("t", ("1",)): _row(1, "s10"), ("t", ("2",)): _row(2, "l4"), ("t", ("3",)): _row(3, "late")}
    assert anomalies == [("delete_of_missing_key", "e2024-01-01-5")]


def _s(n):
    return T0 + dt.timedelta(seconds=n)


def test_versions_opened_and_closed(fold_day):
    previous = {("t", ("1",)): _row(1, "a"), ("t", ("2",)): _row(2, "b"), ("u", ("1",)): _row(1, "x")}
    day = "2024-01-02"
    events = [
        update(1, _row(1, "a"), _row(1, "a2"), day=day),  # closes 1's open version at 1, opens one
        update(2, _row(1, "a2"), _row(1, "a3"), day=day),
        update(3, _row(2, "b"), _row(3, "b"), day=day),  # key 2 -> 3: 2 closed, 3 opened
        insert(4, _row(4, "d"), day=day),
        delete(5, _row(4, "d"), day=day),
        insert(6, _row(5, "e"), table="u", day=day),
        truncate(7, table="u", day=day),  # closes u's 1 (open since an earlier day) and 5
        insert(8, _row(1, "y"), table="u", day=day),
    ]
    result, _, _ = _apply(fold_day, events, previous)
    opened = sorted((r.table_name, r._k, r.row["name"], r._cdc_op, r._cdc_start_at, r._cdc_end_at)
                    for r in result.opened)  # fmt: skip
    assert opened == [
        ("t", '["1"]', "a2", "UPDATE", _s(1), _s(2)),
        ("t", '["1"]', "a3", "UPDATE", _s(2), None),
        ("t", '["3"]', "b", "UPDATE", _s(3), None),
        ("t", '["4"]', "d", "INSERT", _s(4), _s(5)),
        ("u", '["1"]', "y", "INSERT", _s(8), None),
        ("u", '["5"]', "e", "INSERT", _s(6), _s(7)),
    ]
    closed = sorted((r.table_name, r._k, r._cdc_end_at) for r in result.closed)
    assert closed == [("t", '["1"]', _s(1)), ("t", '["2"]', _s(3)), ("u", '["1"]', _s(7))]


def test_configured_keys_for_a_table_without_key_names(fold_day):
    events = [insert(1, {"k": "1", "v": "a"}, table="heap", pk=None), insert(2, {"k": "1", "v": "b"}, table="heap",
                                                                               pk=None)]  # fmt: skip
    result, state, anomalies = _apply(fold_day, events, keys={"db.heap": ["k"]})
    assert state == {("heap", ("1",)): {"k": "1", "v": "b"}} and not result.skipped
    assert anomalies == [("insert_of_existing_key", "e2024-01-01-2")]
