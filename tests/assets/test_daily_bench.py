"""`cdc-pipelines bench-daily` at a tiny size: both days' runs of the daily job, every step of the job timed
from the run's event log, and the targets' ratios made of those seconds."""

import json

import pytest

from assets.cli import main
from assets.graph import DAILY_JOB, build_definitions


@pytest.mark.system
def test_bench_daily_times_every_step_of_the_job(spark, tmp_path):
    assert main(["bench-daily", "--messages", "300", "--out", str(tmp_path), "--no-gx"]) == 0
    result = json.loads((tmp_path / "daily.json").read_text())
    job = build_definitions(tmp_path / "catalog.yaml", tmp_path / "raw", tmp_path / "lake").resolve_job_def(DAILY_JOB)
    steps = set(job.graph.node_names())
    assert len(steps) == 7  # raw, canonical, the quality checks (one step), report, target, snapshots, its check
    assert len(result["days"]) == 2 and result["days"][0]["day"] < result["days"][1]["day"]
    for day in result["days"]:
        assert day["success"] and day["decoded"]["read"] == 300
        assert set(day["steps"]) == steps and all(s > 0 for s in day["steps"].values())
        # the in-process executor runs the steps one after another, inside the run
        assert day["run_s"] >= sum(day["steps"].values())
        groups = day["groups"]
        assert groups["decode"] == ["canonical_changes"]
        assert set(groups["quality"]) == {"quality_checks", "quality_report"}
        assert set(groups["snapshots"]) == {"table_snapshots", "table_snapshots_snapshot_anomalies_check"}
        decode = day["steps"]["canonical_changes"]
        expected = {
            "quality": sum(day["steps"][k] for k in groups["quality"]) / decode,
            "snapshots": sum(day["steps"][k] for k in groups["snapshots"]) / decode,
            "run": day["run_s"] / decode,
        }
        assert day["ratios"] == pytest.approx(expected, abs=1e-3)
    table = (tmp_path / "daily.md").read_text()
    assert all(f"| `{step}` |" in table for step in steps)
    for figure, limit in (("quality checks + report", 0.5), ("snapshots", 0.75), ("whole run", 2.5)):
        assert f"| **{figure}** |" in table and f"<= {limit} (" in table
