"""The snapshot benchmark's input: every message decodes, day 2 updates distinct existing keys."""

from cdc_pipelines.bench.snapshot_days import (
    expected_state,
    render,
    table_of,
    updated_keys,
    write_inserts,
    write_updates,
)
from tests.decode.oracles import decode_paths


def test_the_generated_days_decode_to_inserts_then_updates_of_distinct_keys(tmp_path):
    write_inserts(tmp_path / "d1.jsonl", 50)
    write_updates(tmp_path / "d2.jsonl", 50, 20)
    inserts = decode_paths("oms-canal", [tmp_path / "d1.jsonl"])
    updates = decode_paths("oms-canal", [tmp_path / "d2.jsonl"])
    assert not inserts.rejects and not updates.rejects
    assert [e["after"]["id"] for e in inserts.events] == [str(k) for k in range(1, 51)]
    assert {e["op"] for e in inserts.events} == {"INSERT"} and {e["op"] for e in updates.events} == {"UPDATE"}
    keys = [int(e["after"]["id"]) for e in updates.events]
    assert len(set(keys)) == 20 and all(1 <= k <= 50 for k in keys)
    first = updates.events[0]
    assert (first["before"]["amount"], first["after"]["amount"]) == (f"{keys[0] % 100000}.25", f"{keys[0] % 100000}.75")


def test_tables_spread_the_same_keys_over_the_topic_and_the_expected_state_is_their_fold(tmp_path):
    write_inserts(tmp_path / "d1.jsonl", 10, tables=4)
    write_updates(tmp_path / "d2.jsonl", 10, 3, tables=4)
    inserts = decode_paths("oms-canal", [tmp_path / "d1.jsonl"])
    updates = decode_paths("oms-canal", [tmp_path / "d2.jsonl"])
    assert not inserts.rejects and not updates.rejects
    assert [(e["table_name"], e["after"]["id"]) for e in inserts.events[:5]] == [
        ("items_000", "1"), ("items_001", "2"), ("items_002", "3"), ("items_003", "4"), ("items_000", "5"),
    ]  # fmt: skip
    assert {e["db"] for e in inserts.events} == {"bench"}
    assert all(e["table_name"] == table_of(int(e["after"]["id"]), 4) for e in updates.events)
    assert [int(e["after"]["id"]) for e in updates.events] == updated_keys(10, 3)
    state = {}
    for event in inserts.events + updates.events:  # the fold of the messages, in order
        after = event["after"]
        state.setdefault(event["table_name"], {})[after["id"]] = (after["name"], after["amount"])
    expected = expected_state(10, set(updated_keys(10, 3)), 4)
    assert {t: {(k, *v) for k, v in rows.items()} for t, rows in state.items()} == expected
    assert sorted(expected) == ["items_000", "items_001", "items_002", "items_003"]
    assert table_of(7, 1) == "items"


def test_render_names_the_ratio_the_target_sets():
    table = render([{"table_rows": 1000, "tables": 100, "day": "2024-01-02", "events": 10, "decode_s": 4.0,
                     "snapshot_s": 3.0, "snapshot_jobs": 42, "rows_after": 1000, "anomalies": 0,
                     "state_exact": True}])  # fmt: skip
    assert table.splitlines()[-1] == "| 1,000 | 100 | 2024-01-02 | 10 | 4.0 | 3.0 | 0.75 | 42 | 1,000 | 0 | yes |"
