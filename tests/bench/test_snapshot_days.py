"""The snapshot benchmark's input: every message decodes, day 2 updates distinct existing keys."""

from cdc_pipelines.bench.snapshot_days import render, write_inserts, write_updates
from cdc_pipelines.decode.local import decode_paths


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


def test_render_names_the_ratio_the_target_sets():
    table = render([{"table_rows": 1000, "day": "2024-01-02", "events": 10, "decode_s": 4.0, "snapshot_s": 3.0,
                     "rows_after": 1000, "anomalies": 0}])  # fmt: skip
    assert table.splitlines()[-1] == "| 1,000 | 2024-01-02 | 10 | 4.0 | 3.0 | 0.75 | 1,000 | 0 |"
