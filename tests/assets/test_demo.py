"""`cdc-pipelines demo`: every format's generated extract goes through the Dagster job for a day."""

from __future__ import annotations

from assets.demo import run_demo
from cdc_pipelines.formats import FORMAT_IDS
from cdc_pipelines.io import read_canonical


def test_demo_one_day_all_formats(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    summary = run_demo(tmp_path, days=1, per_day=20)
    day = summary["days"]["2024-01-01"]
    assert day["success"] and day["read"] == day["decoded"] + day["rejected"]
    assert day["rejected"] == len(FORMAT_IDS)  # one malformed line planted in each extract
    assert day["checks"]["conservation_check"] and day["checks"]["image_presence_check"]
    topics = {
        r.source_topic
        for r in read_canonical(spark, tmp_path / "lake" / "changes").select("source_topic").distinct().collect()
    }
    assert topics == set(FORMAT_IDS)
