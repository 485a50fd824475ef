"""The demo's terminal result (no JVM): per day the counts, each check's verdict and the report's path, and a
failed run's step, error and logs above the table."""

import json

import pytest

import assets.demo
from assets.cli import demo_table, main


def _summary(tmp_path, failure=None):
    report = tmp_path / "lake" / "reports" / "dt=2026-11-29" / "index.html"
    day = {"read": 100, "decoded": 98, "rejected": 2, "report": str(report),
           "checks": {"conservation_check": True, "image_presence_check": False}}  # fmt: skip
    stopped = {"read": 5, "decoded": 0, "rejected": 5, "report": None, "checks": {"conservation_check": False}}
    return {
        "lake": str(tmp_path / "lake"), "targets": str(tmp_path / "lake" / "targets"),
        "snapshots": str(tmp_path / "lake" / "snapshots"), "dagster_home": str(tmp_path / "dagster_home"),
        "failure": failure, "days": {"2026-11-29": day, "2026-11-30": stopped},
    }  # fmt: skip


def test_the_table_ends_the_output_one_row_a_day(tmp_path):
    lines = demo_table(_summary(tmp_path))
    assert lines[-3].split() == ["day", "read", "decoded", "rejected", "conservation", "image_presence", "report"]
    report = f"{tmp_path}/lake/reports/dt=2026-11-29/index.html"  # outside the working directory: in full
    assert lines[-2].split() == ["2026-11-29", "100", "98", "2", "pass", "FAIL", report]
    assert lines[-1].split() == ["2026-11-30", "5", "0", "5", "FAIL", "-", "not", "written"]
    assert not any("FAILED" in line for line in lines)


def test_a_failed_run_says_its_step_error_and_logs(tmp_path):
    failure = {"step": "canonical_changes", "error": "boom", "run_id": "r1", "spark_log": "/logs/spark.log"}
    lines = demo_table(_summary(tmp_path, failure))
    assert "the run FAILED at step canonical_changes: boom" in lines
    assert any("run r1" in line and "/logs/spark.log" in line for line in lines)


def test_json_prints_the_summary_and_a_failure_exits_1(tmp_path, monkeypatch, capsys):
    summary = _summary(tmp_path)
    monkeypatch.setattr(assets.demo, "run_demo", lambda out, days, per_day: summary)
    assert main(["demo", "--json", "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == summary
    summary["failure"] = {"step": "canonical_changes", "error": "boom", "run_id": "r1", "spark_log": "spark.log"}
    with pytest.raises(SystemExit) as stopped:
        main(["demo", "--out", str(tmp_path)])
    assert stopped.value.code == 1 and capsys.readouterr().out.splitlines()[-1].startswith("2026-11-30")
