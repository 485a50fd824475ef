"""`cdc-pipelines demo`: every format's generated extract, and a kcat-enveloped one, through the daily job,
which leaves the day's quality report."""

import datetime as dt
import json
from pathlib import Path

import pytest

from assets.demo import run_demo
from cdc_pipelines.demo.catalog import KCAT_TOPIC, TARGETS
from cdc_pipelines.formats import SELF_CONTAINED
from cdc_pipelines.lake.io import read_canonical


@pytest.mark.system
def test_demo_one_day_all_formats(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    summary = run_demo(tmp_path, days=1, per_day=20, data_docs=False)
    yesterday = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
    assert list(summary["days"]) == [yesterday]  # the default days end yesterday
    day = summary["days"][yesterday]
    assert day["success"] and day["read"] == day["decoded"] + day["rejected"]
    assert day["rejected"] == len(SELF_CONTAINED) + 1  # one malformed line planted in each extract
    assert day["checks"]["conservation_check"] and day["checks"]["image_presence_check"]
    # the oms-canal topic's three tables, applied from nothing: no anomalies on a first day
    assert day["snapshot"]["tables"] == 3 and day["snapshot"]["anomalies"] == 0
    assert day["checks"]["snapshot_anomalies_check"]
    assert len(list(Path(summary["snapshots"]).glob("db=*/table=*/current/_delta_log"))) == 3
    topics = {
        r.source_topic
        for r in read_canonical(spark, tmp_path / "lake" / "changes").select("source_topic").distinct().collect()
    }
    assert topics == set(SELF_CONTAINED) | {KCAT_TOPIC}
    targets = Path(summary["targets"])
    for format_id in {f for fs in TARGETS.values() for f in fs}:
        assert list((targets / format_id / f"dt={yesterday}").glob("source_topic=*/part-*")), format_id
    report = Path(day["report"])
    assert report == tmp_path / "lake" / "reports" / f"dt={yesterday}" / "index.html"
    assert "<svg" in report.read_text()
    activity = json.loads((report.parent / "summary.json").read_text())["activity"]
    assert set(activity["hourly"]) == topics
    # 22 events spread over the day: every topic with event times has events in the morning and the evening
    timed = {t: h for t, h in activity["hourly"].items() if t not in activity["outside_day"]}
    assert len(timed) >= 12 and all(sum(h["2"].values()) and sum(h["20"].values()) for h in timed.values())
    assert activity["flags"] == {}  # nothing stands out in the demo
    # sync lags 0.1-1 s; the SharePlex formats keep whole seconds, so theirs reads 0
    medians = sorted(lag["p50"] for lag in activity["lag"].values())
    assert all(0 <= m <= 1.0 for m in medians) and sum(m >= 0.1 for m in medians) >= 8
