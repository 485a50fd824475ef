"""The day's figures kept by the checks step: the report renders them as if it had scanned the day itself,
and scans again once any source table has a newer version."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from cdc_pipelines.decode.pool import decode_with_processes
from cdc_pipelines.engines.local import read_record
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.quality.daily_report import write_day_figures, write_day_report
from cdc_pipelines.quality.day_figures import FIGURES_FILE
from cdc_pipelines.quality.partition import Thresholds
from tests.conftest import resource

DAY = "2024-03-01"


@pytest.fixture(scope="module")
def decoded_lake(tmp_path_factory):
    """Two topics decoded, their counts recorded: built once, never written to by the tests (a test that
    changes a table works on its own copy: Delta's logs name their files relative to the table)."""
    lake = tmp_path_factory.mktemp("day_figures") / "lake"
    for fmt, topic in (("dts-avro", "users"), ("oms-canal", "orders")):
        decode_with_processes(fmt, [str(resource(fmt, "seed.jsonl"))], topic=topic, dt=DAY, out=lake)
    return lake


def _summary(report) -> dict:
    return json.loads(report.summary.read_text())


def test_a_report_renders_the_kept_figures_until_the_lake_moves_on(engine, tmp_path, decoded_lake):
    lake = tmp_path / "lake"
    shutil.copytree(decoded_lake, lake)  # its counts table gets a newer version below
    kept = write_day_figures(engine, lake, DAY, tmp_path / "kept", great_expectations=False)
    assert (tmp_path / "kept" / f"dt={DAY}" / FIGURES_FILE).is_file()
    rendered = write_day_report(engine, lake, DAY, tmp_path / "kept", great_expectations=False)
    scanned = write_day_report(engine, lake, DAY, tmp_path / "scanned", great_expectations=False)
    before = _summary(rendered)
    assert before == _summary(scanned)
    assert rendered.rules == {r.rule: r.passed for r in kept.results} and rendered.rules["conservation_check"]

    # the counts table gets a newer version: five more messages read than the lake holds
    counts = read_record(str(lake), DAY).recorded["orders"]
    write_counts(None, lake, DAY, {"orders": {**counts, "read": counts["read"] + 5}})
    again = write_day_report(engine, lake, DAY, tmp_path / "kept", great_expectations=False)
    assert again.rules["conservation_check"] is False
    read = {s["rules"]["conservation_check"]["info"]["read"] for s in (before, _summary(again))}
    assert max(read) - min(read) == 5


def test_other_thresholds_are_not_served_the_kept_figures(engine, tmp_path, decoded_lake):
    lake = decoded_lake  # read only: the figures and the report go to tmp_path
    write_day_figures(engine, lake, DAY, tmp_path, great_expectations=False)
    strict = replace(Thresholds(), max_reject_rate=0.0, future_tolerance=Thresholds().future_tolerance * 2)
    report = write_day_report(engine, lake, DAY, tmp_path, thresholds=strict, great_expectations=False)
    assert _summary(report)["rules"]["conservation_check"]["threshold"] == 0.0
