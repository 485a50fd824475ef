"""The demo run: sample extracts for every format, then the daily Dagster job over all their days at once.

The days run as one ranged run (what a backfill launched from the UI does under the single-run
policy), in process against a local Dagster instance under `<out>/dagster_home`, so `dagster dev`
started with that DAGSTER_HOME and the demo's locations shows the runs afterwards. That instance is the
demo's own: it gets a `dagster.yaml` (`INSTANCE_SETTINGS`) unless DAGSTER_HOME names another.
"""

import datetime as dt
import os
from pathlib import Path

import dagster as dg
import yaml

from assets.graph import DAILY_JOB, build_definitions
from assets.keys import CANONICAL, REPORT, SNAPSHOTS
from assets.run_progress import run_with_step_lines
from cdc_pipelines.demo.catalog import KCAT_SOURCE, KCAT_TOPIC, demo_topics
from cdc_pipelines.demo.extracts import generate, wrap_kcat
from cdc_pipelines.lake.layout import SNAPSHOTS_DIR, TARGETS_DIR
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.runtime.session import log_dir

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
# the demo instance's dagster.yaml: no telemetry banner or upload, no first-visit tour in `dagster dev`, and a
# run's console at INFO where one runs `dagster` against it (`dagster asset materialize`: Dagster's DEBUG
# events stay in the event log, which takes every event whatever this level)
INSTANCE_SETTINGS = {
    "telemetry": {"enabled": False},
    "nux": {"enabled": False},
    "python_logs": {"python_log_level": "INFO"},
}


def demo_instance_home(out: Path) -> str:
    """DAGSTER_HOME, set to `out/dagster_home` when unset; the demo's own home gets its `dagster.yaml`."""
    own = out / "dagster_home"
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(own)))
    home.mkdir(parents=True, exist_ok=True)
    if home == own and not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text(yaml.safe_dump(INSTANCE_SETTINGS, sort_keys=False))
    return str(home)


def failure(result: dg.ExecuteInProcessResult) -> dict | None:
    """For a run that failed: its first failed step and that step's error, and where the run's logs are."""
    if result.success:
        return None
    failed = result.get_step_failure_events()
    error = failed[0].event_specific_data.error if failed else None
    return {
        "step": failed[0].step_key if failed else None,
        "error": error.message.strip() if error else "the run failed",
        "run_id": result.run_id,
        "spark_log": str(Path(log_dir()) / "spark.log"),
    }


def write_demo_inputs(out: Path, day_list: list[dt.date], per_day: int) -> Path:
    """Raw extracts of every demo topic under `out/raw`, and the catalog naming them; returns the catalog."""
    generate(out / "raw", day_list, per_day)
    for day in day_list:
        part = Path(f"dt={day.isoformat()}") / "part-0.jsonl"
        wrap_kcat(out / "raw" / KCAT_SOURCE / part, out / "raw" / KCAT_TOPIC / part, KCAT_TOPIC)
    catalog = out / "catalog.yaml"
    catalog.write_text(yaml.safe_dump({"topics": demo_topics()}, sort_keys=False))
    return catalog


def run_demo(
    out: str | Path, days: int, per_day: int = 60, start: dt.date | None = None, data_docs: bool = True
) -> dict:
    """Generate `days` days of extracts for all formats and run the daily job over them as one range.

    The days end yesterday (UTC) unless `start` is given, so they sit inside the default partitions window.
    """
    out = Path(out).resolve()
    start = start or dt.datetime.now(dt.UTC).date() - dt.timedelta(days=days)
    day_list = [start + dt.timedelta(days=i) for i in range(days)]
    catalog = write_demo_inputs(out, day_list, per_day)
    home = demo_instance_home(out)
    job = build_definitions(catalog, out / "raw", out / "lake", data_docs).resolve_job_def(DAILY_JOB)
    tags = {RANGE_START: day_list[0].isoformat(), RANGE_END: day_list[-1].isoformat()}
    with dg.DagsterInstance.get() as instance:
        result = run_with_step_lines(job, instance, tags=tags, raise_on_error=False)
    decoded = {m.partition: m.metadata for m in result.asset_materializations_for_node(CANONICAL.path[-1])}
    reports = {m.partition: m.metadata["report"].value for m in result.asset_materializations_for_node(REPORT.path[-1])}
    snapshots = {m.partition: m.metadata for m in result.asset_materializations_for_node(SNAPSHOTS.path[-1])}
    checks = result.get_asset_check_evaluations()
    results = {
        day: {
            "success": result.success,
            **{k: v.value for k, v in decoded.get(day, {}).items() if k in MESSAGE_COUNTS},
            "checks": {c.check_name: c.passed for c in checks if c.partition == day},
            "report": reports.get(day),
            "snapshot": {k: v.value for k, v in snapshots.get(day, {}).items() if k in ("tables", "rows", "anomalies")},
        }
        for day in (d.isoformat() for d in day_list)
    }
    return {
        "lake": str(out / "lake"),
        "targets": str(out / "lake" / TARGETS_DIR),
        "snapshots": str(out / "lake" / SNAPSHOTS_DIR),
        "raw": str(out / "raw"),
        "catalog": str(catalog),
        "dagster_home": home,
        "run_id": result.run_id,
        "failure": failure(result),
        "days": results,
    }
