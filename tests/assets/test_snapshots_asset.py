"""`table_snapshots` in a ranged run (as a UI backfill runs it): days applied in order, each day's figures
and anomaly check recorded against its partition; a topic not marked `snapshot: true` is left out."""

import dagster as dg

from assets.graph import build_resources
from assets.keys import SNAPSHOTS
from assets.snapshots import snapshot_anomalies_check, table_snapshots
from tests.lake.partitions import write_partitions
from tests.snapshots.events import changes_df, delete, insert

D1, D2 = "2024-01-02", "2024-01-03"
RANGE = {"dagster/asset_partition_range_start": D1, "dagster/asset_partition_range_end": D2}
CATALOG = """topics:
  - {name: test, format: oms-canal, snapshot: true}
  - {name: other, format: oms-canal}
"""


def test_ranged_run_applies_days_in_order(spark, tmp_path):
    row = {"id": "1", "name": "a"}
    events = [
        insert(1, row, day=D1),
        insert(2, row | {"id": "2"}, day=D1) | {"source_topic": "other"},  # not a snapshot topic
        delete(1, row, day=D2),
        delete(2, row | {"id": "3"}, day=D2),  # never inserted: an anomaly on D2 only
    ]
    write_partitions(changes_df(spark, events), tmp_path / "lake" / "changes")
    (tmp_path / "catalog.yaml").write_text(CATALOG)
    resources = build_resources(tmp_path / "catalog.yaml", tmp_path / "raw", tmp_path / "lake")
    result = dg.materialize([table_snapshots, snapshot_anomalies_check], resources=resources, tags=RANGE)
    assert result.success
    figures = {
        m.partition: {k: m.metadata[k].value for k in ("tables", "rows", "applied", "anomalies")}
        for m in result.asset_materializations_for_node("table_snapshots")
        if m.asset_key == SNAPSHOTS
    }
    assert figures == {
        D1: {"tables": 1, "rows": 1, "applied": 1, "anomalies": 0},
        D2: {"tables": 0, "rows": 0, "applied": 2, "anomalies": 1},
    }
    checks = {c.partition: c.passed for c in result.get_asset_check_evaluations() if c.partition}
    assert checks == {D1: True, D2: False}
