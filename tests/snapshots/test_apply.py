"""apply_day on hand-written days: every op, key changes, TRUNCATE, order ties, anomalies, no-PK tables."""

from cdc_pipelines.snapshots import apply_day
from tests.snapshots.events import changes_df, delete, empty_state, insert, state_rows, truncate, update


def _row(i, name):
    return {"id": str(i), "name": name}


def _apply(spark, events, previous=None):
    result = apply_day(previous if previous is not None else empty_state(spark), changes_df(spark, events))
    anomalies = sorted((a.kind, a.event_id) for a in result.anomalies.collect())
    return result, state_rows(result.state), anomalies


def test_ops_key_change_and_anomalies(spark):
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
    result, state, anomalies = _apply(spark, events)
    assert state == {("t", ("1",)): _row(1, "dup"), ("t", ("5",)): _row(5, "b-moved"), ("t", ("7",)): _row(7, "y")}
    assert anomalies == [
        ("delete_of_missing_key", "e2024-01-01-5"),
        ("insert_of_existing_key", "e2024-01-01-6"),
        ("update_of_missing_key", "e2024-01-01-7"),
    ]
    assert [(s["table_name"], s["reason"], s["events"]) for s in result.skipped] == [
        ("nopk", "no primary-key columns", 1)
    ]
    last = {r.key[0]: (r._cdc_op, r._cdc_event_id) for r in result.state.collect()}
    assert last["5"] == ("UPDATE", "e2024-01-01-4") and last["1"] == ("INSERT", "e2024-01-01-6")


def test_previous_day_truncate_and_reinsert(spark):
    day1, _, _ = _apply(spark, [insert(1, _row(1, "a")), insert(2, _row(2, "b")), insert(3, _row(1, "x"), table="u")])
    day2 = [
        update(1, _row(2, "b"), _row(2, "b2"), day="2024-01-02"),
        truncate(2, day="2024-01-02"),
        insert(3, _row(1, "new"), day="2024-01-02"),  # the table was emptied: not a duplicate
        delete(4, _row(2, "b2"), day="2024-01-02"),  # gone with the truncate
    ]
    _, state, anomalies = _apply(spark, day2, previous=day1.state)
    assert state == {("t", ("1",)): _row(1, "new"), ("u", ("1",)): _row(1, "x")}
    assert anomalies == [("delete_of_missing_key", "e2024-01-02-4")]


def test_order_is_time_then_numeric_seq_then_lineage(spark):
    import datetime as dt

    at = dt.datetime(2024, 1, 1, 12)
    events = [  # listed out of order; same time, seq 10 after seq 9, ties broken by source_line
        update(1, _row(1, "s9"), _row(1, "s10"), seq="10", at=at),
        insert(2, _row(1, "s9"), seq="9", at=at),
        update(3, _row(2, "l3"), _row(2, "l4"), seq="5", at=at),
        insert(0, _row(2, "l3"), seq="5", at=at),
        insert(4, _row(3, "late"), at=at + dt.timedelta(seconds=1)),
        delete(5, _row(3, "late"), at=at - dt.timedelta(seconds=1)),  # earlier: the key did not exist yet
    ]
    _, state, anomalies = _apply(spark, events)
    assert state == {("t", ("1",)): _row(1, "s10"), ("t", ("2",)): _row(2, "l4"), ("t", ("3",)): _row(3, "late")}
    assert anomalies == [("delete_of_missing_key", "e2024-01-01-5")]
