"""The local engine's day: the change rows read for the engine's choice are the ones folded, read once."""

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.snapshots import local_days
from tests.snapshots.events import insert
from tests.snapshots.lakes import SnapshotEngine

D1 = "2024-01-01"


def test_the_day_read_for_the_engine_choice_is_folded_unless_the_changes_moved_on(tmp_path, monkeypatch):
    engine = SnapshotEngine("local", None)
    lake = engine.lake(tmp_path, [insert(1, {"id": "1"})])
    reads = []
    read = delta_rs.read_partition
    monkeypatch.setattr(delta_rs, "read_partition", lambda *args: reads.append(args[0]) or read(*args))

    assert local_days.unwritable(lake, str(lake / "snapshots"), [D1]) is None
    assert local_days.day_changes(lake, D1, None).column("event_id").to_pylist() == ["e2024-01-01-1"]
    assert len(reads) == 1  # the choice's read, taken by the fold

    assert local_days.unwritable(lake, str(lake / "snapshots"), [D1]) is None
    engine.write_changes(lake / "changes", [insert(1, {"id": "1"}), insert(2, {"id": "2"})])  # the day decoded again
    assert local_days.day_changes(lake, D1, None).column("event_id").to_pylist() == ["e2024-01-01-1", "e2024-01-01-2"]
    assert len(reads) == 3
