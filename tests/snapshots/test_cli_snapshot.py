"""`cdc-pipelines snapshot`: the last line's figures, and a day never decoded exits 2."""

import json

from cdc_pipelines.cli import main
from cdc_pipelines.lake.io import write_partitions
from tests.snapshots.events import changes_df, delete, insert


def test_snapshot_command_prints_the_days_figures(spark, tmp_path, capsys):
    events = [
        insert(1, {"id": "1", "name": "a"}),
        insert(2, {"id": "2", "name": "b"}),
        delete(3, {"id": "3", "name": "never there"}),
        insert(4, {"k": "x"}, table="heap", pk=None),
    ]
    write_partitions(changes_df(spark, events), tmp_path / "lake" / "changes")
    out = tmp_path / "snaps"
    assert main(["snapshot", "--canonical", str(tmp_path / "lake"), "--dt", "2024-01-01", "--out", str(out)]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last == {"tables": 1, "rows": 2, "applied": 3, "anomalies": 1, "skipped_tables": ["db.heap"]}
    assert (out / "db=db" / "table=t" / "dt=2024-01-01").is_dir()

    assert main(["snapshot", "--canonical", str(tmp_path / "lake"), "--dt", "2024-01-05"]) == 2
    assert "dt=2024-01-05 was never decoded" in capsys.readouterr().err
