"""A day's quality run stays one scan of the partition: the Spark jobs it triggers are counted (job group
and status tracker) and must not grow back to a job per rule, sub-check and example query.

The limits are the figures measured on this lake after the one-scan rewrite (before it: 42 jobs for the
report, 7/7/15/14 for the four checks). Adaptive execution runs each shuffle stage as a job of its own, so
an aggregation costs 2-5 jobs; the Delta reads of the counts and the partition take 3.
"""

from __future__ import annotations

from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.engines.spark import SparkEngine
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.quality.daily_report import write_day_figures, write_day_report
from tests.conftest import resource

DAY = "2024-03-01"
MAX_REPORT_JOBS = 22  # rules, event counts, volume and lag, without GX
MAX_RENDER_JOBS = 0  # the report after the checks step kept the day's figures: no scan of the day


def _lake(spark, root):
    """Two topics decoded into a lake with their counts recorded, one malformed line among them."""
    bad = root / "bad.jsonl"
    bad.write_text("garbage\n")
    lake = root / "lake"
    for fmt, topic, extra in (("dts-avro", "users", [bad]), ("oms-canal", "orders", [])):
        decoded = decode_files(spark, fmt, [resource(fmt, "seed.jsonl"), *extra], topic=topic, dt=DAY)
        write_counts(spark, lake, DAY, {topic: write_decoded(decoded, lake)})
    return lake


def _jobs(spark, label: str, run) -> int:
    sc = spark.sparkContext
    group = f"test-jobs-{label}"
    sc.setJobGroup(group, label)
    try:
        run()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(sc.statusTracker().getJobIdsForGroup(group))


def test_day_report_and_checks_stay_within_their_jobs(spark, tmp_path):
    lake = _lake(spark, tmp_path)
    engine = SparkEngine(spark)
    report = write_day_report(engine, lake, DAY, tmp_path / "warm", great_expectations=False)  # Delta log warm
    assert not report.passed  # 1 reject of 10 messages is over the 5 % rate: the run has examples to fetch
    kept = {"out_dir": tmp_path / "kept", "great_expectations": False}
    scanned = {"out_dir": tmp_path, "great_expectations": False}
    jobs = {
        "report": _jobs(spark, "report", lambda: write_day_report(engine, lake, DAY, **scanned)),
        "figures": _jobs(spark, "figures", lambda: write_day_figures(engine, lake, DAY, **kept)),
        "render": _jobs(spark, "render", lambda: write_day_report(engine, lake, DAY, **kept)),
    }
    limits = {"report": MAX_REPORT_JOBS, "figures": MAX_REPORT_JOBS, "render": MAX_RENDER_JOBS}
    assert {k: n for k, n in jobs.items() if n > limits[k]} == {}, jobs
