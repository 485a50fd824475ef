"""`cdc-pipelines demo`: every format's generated extract, and a kcat-enveloped one, through the daily job."""

from pathlib import Path

from assets.demo import run_demo
from cdc_pipelines.demo_catalog import KCAT_TOPIC, TARGETS
from cdc_pipelines.formats import FORMAT_IDS
from cdc_pipelines.io import read_canonical


def test_demo_one_day_all_formats(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    summary = run_demo(tmp_path, days=1, per_day=20)
    day = summary["days"]["2024-01-01"]
    assert day["success"] and day["read"] == day["decoded"] + day["rejected"]
    assert day["rejected"] == len(FORMAT_IDS) + 1  # one malformed line planted in each extract
    assert day["checks"]["conservation_check"] and day["checks"]["image_presence_check"]
    # the oms-canal topic's three tables, applied from nothing: no anomalies on a first day
    assert day["snapshot"]["tables"] == 3 and day["snapshot"]["anomalies"] == 0
    assert day["checks"]["snapshot_anomalies_check"]
    assert len(list(Path(summary["snapshots"]).glob("db=*/table=*/dt=2024-01-01"))) == 3
    topics = {
        r.source_topic
        for r in read_canonical(spark, tmp_path / "lake" / "changes").select("source_topic").distinct().collect()
    }
    assert topics == set(FORMAT_IDS) | {KCAT_TOPIC}
    targets = Path(summary["targets"])
    for format_id in {f for fs in TARGETS.values() for f in fs}:
        assert list((targets / format_id / "dt=2024-01-01").glob("source_topic=*/part-*")), format_id
