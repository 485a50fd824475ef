"""`cdc-pipelines snapshot`: the last line's figures and tables, `--keys`, `--as-of` (printed and
exported), and a day never decoded exits 2."""

import json

import pyarrow.parquet as pq
import pytest

from cdc_pipelines.cli.commands import main
from tests.snapshots.events import delete, insert

D1, D2 = "2024-01-01", "2024-01-02"
EVENTS = [
    insert(1, {"id": "1", "name": "a"}),
    insert(2, {"id": "2", "name": "b"}),
    delete(3, {"id": "3", "name": "never there"}),
    insert(4, {"k": "x"}, table="heap", pk=None),
    delete(5, {"id": "1", "name": "a"}, day=D2),
]


def test_snapshot_command_prints_the_days_figures(snapshot_engine, tmp_path, capsys):
    lake, out = snapshot_engine.lake(tmp_path, EVENTS), tmp_path / "snaps"
    engine = ["--engine", snapshot_engine.name]
    assert main(["snapshot", "--canonical", str(lake), "--dt", D1, "--out", str(out), *engine]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    tables = last.pop("per_table")
    assert last == {"tables": 1, "rows": 2, "applied": 3, "anomalies": 1, "skipped_tables": ["db.heap"]}
    assert tables == {"db.t": {"rows": 2, "current": str(out / "db=db" / "table=t" / "current"),
                               "history": str(out / "db=db" / "table=t" / "history"),
                               "current_version": 1, "history_version": 1}}  # fmt: skip

    args = ["snapshot", "--canonical", str(lake), "--out", str(out), *engine]
    assert main([*args, "--dt", D2, "--keys", "db.heap=k"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (last["rows"], last["skipped_tables"]) == (1, [])  # day 2 has no heap events: the key is unused

    assert main([*args, "--dt", "2024-01-05"]) == 2
    assert "dt=2024-01-05 was never decoded" in capsys.readouterr().err


def test_snapshot_as_of_prints_and_exports_a_days_state(snapshot_engine, tmp_path, capsys):
    """`--as-of` reads the tables by version, on either engine."""
    lake, out = snapshot_engine.lake(tmp_path, EVENTS), tmp_path / "snaps"
    args = ["snapshot", "--canonical", str(lake), "--out", str(out), "--engine", snapshot_engine.name]
    assert main([*args, "--dt", D1]) == 0 and main([*args, "--dt", D2]) == 0
    capsys.readouterr()

    assert main([*args, "--as-of", D1]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert sorted((r["_table"], r["id"], r["name"]) for r in lines[:-1]) == [("db.t", 1, "a"), ("db.t", 2, "b")]
    assert {r["_cdc_event_time"] for r in lines[:-1]} == {"2024-01-01 00:00:01", "2024-01-01 00:00:02"}
    assert lines[-1]["tables"]["db.t"]["rows"] == 2
    assert main([*args, "--as-of", D2, "--export", str(tmp_path / "export")]) == 0
    exported = pq.read_table(tmp_path / "export" / "db=db" / "table=t").to_pylist()
    assert [(r["id"], r["name"]) for r in exported] == [(2, "b")]


def test_snapshot_routes_shards_and_takes_a_policy(tmp_path, capsys):
    """`--route REGEX=DB.TABLE` merges shards into one table; `--schema-changes evolve` applies the day's DDL;
    a route that is no regular expression is a usage error."""
    from tests.snapshots.lakes import SnapshotEngine

    shards = [insert(1, {"id": "1", "name": "a"}, table="t_01"), insert(2, {"id": "2", "name": "b"}, table="t_02"),
              insert(3, {"id": "1", "name": "c"}, table="t_02")]  # fmt: skip
    lake = SnapshotEngine("local", None).lake(tmp_path, shards)
    args = ["snapshot", "--canonical", str(lake), "--dt", D1, "--engine", "local", "--schema-changes", "evolve"]
    assert main([*args, "--route", r"db\.t_[0-9]+=db.t"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (list(last["per_table"]), last["rows"], last["anomalies"]) == (["db.t"], 2, 2)  # a collision: 2 kinds
    with pytest.raises(SystemExit) as exit:
        main([*args, "--route", "db.t_[=db.t"])
    assert exit.value.code == 2
    assert "is not a regular expression" in capsys.readouterr().err
