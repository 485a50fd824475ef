"""`cdc-pipelines quality`: report files, one-line JSON summary last, exit codes."""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.cli.commands import main
from cdc_pipelines.lake.run_counts import write_counts
from tests.conftest import resource


def _decode(lake, fmt: str, topic: str, *inputs) -> dict:
    args = ["decode", "--format", fmt, "--out", str(lake), "--topic", topic, "--dt", "2024-03-01", *map(str, inputs)]
    assert main(args) == 0
    return args


@pytest.mark.parametrize("engine", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_quality_writes_report_and_prints_rule_outcomes(engine, tmp_path, capsys):
    lake = tmp_path / "lake"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    _decode(lake, "dts-avro", "orders", resource("dts-avro", "seed.jsonl"), bad)
    counts = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    write_counts(None, lake, "2024-03-01", {"orders": counts})  # what the Dagster asset records per run

    assert main(["quality", "--canonical", str(lake), "--dt", "2024-03-01", "--no-gx", "--engine", engine]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # 1 reject out of 6 messages is over the default 5 % reject rate: reported, still exit 0
    assert last == {
        "image_presence_check": True,
        "timestamp_precision_check": True,
        "pk_consistency_check": True,
        "conservation_check": False,
    }
    day = lake / "reports" / "dt=2024-03-01"
    html = (day / "index.html").read_text()
    assert "conservation_check" in html and "not a valid JSON object" in html and "shop.orders" in html
    summary = json.loads((day / "summary.json").read_text())
    assert summary["rules"]["conservation_check"]["info"]["read"] == 6
    assert "great_expectations" not in summary and not (day / "gx").exists()  # --no-gx
    orders = next(c for c in summary["event_counts"] if c["table"] == "shop.orders")
    assert orders["ops"] == {"INSERT": 1, "UPDATE": 1, "DELETE": 1, "DDL": 1}


def test_quality_report_folder_option_and_missing_partition(tmp_path, capsys):
    lake = tmp_path / "lake"
    _decode(lake, "oms-shareplex", "t", resource("oms-shareplex", "seed.jsonl"))
    out = tmp_path / "reports"
    assert main(["quality", "--canonical", str(lake), "--dt", "2024-03-01", "--out", str(out), "--no-gx"]) == 0
    assert (out / "dt=2024-03-01" / "index.html").is_file()
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["conservation_check"] is True
    assert main(["quality", "--canonical", str(lake), "--dt", "2024-03-02"]) == 2
    assert "no changes or rejects for dt=2024-03-02" in capsys.readouterr().err
    assert main(["quality", "--canonical", str(tmp_path / "nowhere"), "--dt", "2024-03-01"]) == 2


def test_an_engine_that_cannot_serve_the_run_fails_at_once(tmp_path, capsys):
    """`--engine local` of a lake delta-rs cannot reach: exit 2 naming the case, before any work."""
    args = ["quality", "--canonical", "s3a://bucket/lake", "--dt", "2024-03-01", "--no-gx", "--engine", "local"]
    assert main(args) == 2
    assert "--engine local cannot run quality here: the lake or the output folder is not on local disk" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("engine", ["local", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_recorded_day_that_read_nothing_is_judged_as_empty(engine, tmp_path, capsys):
    """A day whose decode found no input (its counts recorded, no change or reject table yet): every rule
    judges no events, nothing fails to read."""
    lake = tmp_path / "lake"
    write_counts(
        None, lake, "2024-03-01", {"orders": dict.fromkeys(("read", "decoded", "rejected", "filtered", "events"), 0)}
    )
    assert main(["quality", "--canonical", str(lake), "--dt", "2024-03-01", "--no-gx", "--engine", engine]) == 0
    summary = json.loads((lake / "reports" / "dt=2024-03-01" / "summary.json").read_text())
    assert {name: rule["checked"] for name, rule in summary["rules"].items()} == dict.fromkeys(
        ("image_presence_check", "timestamp_precision_check", "pk_consistency_check", "conservation_check"), 0
    )
