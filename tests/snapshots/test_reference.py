"""Snapshots against an independent reference: the demo generator's true events, encoded in every format,
decoded again, applied day by day, must give the state (and the anomalies) the reference fold gives.

Formats that carry key columns must match exactly (values compared in the representation each format
gives them, `tests/formats/carry.py`); one of them is also applied with its before images removed (a
format without before images still applies); formats without key columns must be skipped whole.
Decoding runs in process (the same codec functions Spark runs) to keep the test fast; the Spark decode
path is compared with the in-process one elsewhere. Here the day's net effects are folded onto the
previous state in Python, as the current table's MERGE applies them; `test_reference_tables.py` checks
the Delta tables themselves (current and history) against the same reference.
"""

import datetime as dt
import json

from cdc_pipelines.demo.extracts import TABLES, canonical_events, write_extract
from cdc_pipelines.formats import SELF_CONTAINED
from tests.decode.oracles import decode_paths
from tests.formats.carry import same_value
from tests.snapshots.reference import fold

DAYS = (dt.date(2024, 1, 1), dt.date(2024, 1, 2))
PER_DAY = 24  # enough for day 2 to insert a key day 1 left (the generator restarts its keys each day)
WITH_KEYS = ("oms-default", "oms-default-extend", "oms-canal", "oms-dataworks", "dts-avro", "dts-canal",
             "dataworks-json", "maxwell-json", "ogg-json")  # fmt: skip
NO_BEFORE = "oms-canal/no-before"  # oms-canal's events with the before image of every UPDATE removed


def _decoded(tmp_path, day: dt.date, truth: list[dict]) -> list[dict]:
    """Every format's decoded events of the day, each format's tables kept apart by a `<format>|` db prefix."""
    events = []
    for format_id in SELF_CONTAINED:
        path = tmp_path / format_id / f"dt={day}" / "part-0.jsonl"
        write_extract(format_id, truth, path, malformed=False)
        for e in decode_paths(format_id, [path], topic=format_id, dt=day.isoformat()).events:
            events.append(e | {"db": f"{format_id}|{e['db']}"})
            if format_id == "oms-canal":
                no_before = {"before": None} if e["op"] == "UPDATE" else {}
                events.append(e | {"db": f"{NO_BEFORE}|{e['db']}", "event_id": "nb-" + e["event_id"]} | no_before)
    return events


def _same_rows(want: dict, got: dict, target: str, types: dict) -> bool:
    return want.keys() == got.keys() and all(same_value(want[c], got[c], types[c], target) for c in want)


def test_every_format_applies_to_the_reference_state(fold_day, tmp_path):
    truth_state: dict = {}
    state: dict = {}  # {(db, table_name, key tuple): row}
    for day in DAYS:
        truth = list(canonical_events(day, PER_DAY, keys_from=0))  # day 2 inserts keys day 1 left
        truth_anomalies = fold(truth_state, truth)
        applied = fold_day(_decoded(tmp_path, day, truth), {((d, t), k): row for (d, t, k), row in state.items()})
        truncated = {(t["db"], t["table_name"]) for t in applied.tables if t["truncated"]}
        state = {k: v for k, v in state.items() if k[:2] not in truncated}
        for r in applied.net:
            k = (r.db, r.table_name, tuple(json.loads(r._k)))
            state[k] = dict(r.row) if r.kind == "set" else state.pop(k, None)
            if state[k] is None:
                del state[k]
        got: dict = {}
        for (db, table_name, k), row in state.items():
            got.setdefault(db.split("|")[0], {}).setdefault((db.split("|")[1], table_name), {})[k] = row
        anomalies: dict = {}
        for a in applied.anomalies:
            label = (a.db.split("|")[1], a.table_name), a.kind
            anomalies.setdefault(a.db.split("|")[0], {}).setdefault(label, 0)
            anomalies[a.db.split("|")[0]][label] += 1
        for target in (*WITH_KEYS, NO_BEFORE):
            source = target.split("/")[0]
            assert got[target].keys() == {t for t, rows in truth_state.items() if rows}, (day, target)
            for table, rows in truth_state.items():
                types = TABLES[table][1]
                have = got[target].get(table, {})
                assert have.keys() == rows.keys(), (day, target, table)
                bad = [k for k in rows if not _same_rows(rows[k], have[k], source, types)]
                assert not bad, (day, target, table, [(rows[k], have[k]) for k in bad[:2]])
            assert anomalies.get(target, {}) == dict(truth_anomalies), (day, target)
        skipped = {s["db"].split("|")[0] for s in applied.skipped}
        assert skipped == set(SELF_CONTAINED) - set(WITH_KEYS), day
        assert all(s["reason"] == "no primary-key columns" for s in applied.skipped)
        assert not set(got) - {*WITH_KEYS, NO_BEFORE}, "a skipped format's rows were applied"
    assert sum(truth_anomalies.values()) == 1, "day 2 inserts a key day 1 left: an anomaly both must see"
