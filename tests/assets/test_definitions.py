"""workspace.yaml loads the project's Definitions with one asset per topic, the canonical table, one per
target and the checks; the daily job has a schedule; every asset takes a range in one run."""

import datetime as dt
import importlib
from pathlib import Path

import dagster as dg
import yaml

from assets.graph import DAILY_JOB
from assets.keys import CANONICAL, REPORT, SNAPSHOTS, raw_key, target_key
from assets.partitions import start_date
from cdc_pipelines.demo.catalog import demo_topics
from cdc_pipelines.extract.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]


def _workspace_defs() -> dg.Definitions:
    location = yaml.safe_load((ROOT / "workspace.yaml").read_text())["load_from"][0]["python_module"]
    assert (ROOT / location["working_directory"]).resolve() == ROOT
    return importlib.import_module(location["module_name"]).defs


def test_workspace_graph_has_every_asset():
    defs = _workspace_defs()
    topics = load_catalog(ROOT / "catalog.yaml")
    graph = defs.resolve_asset_graph()
    targets = {f for t in topics for f in t.targets}
    assert targets and any(t.envelope == "kcat" for t in topics)
    expected = {raw_key(t.name) for t in topics} | {CANONICAL, REPORT, SNAPSHOTS} | {target_key(f) for f in targets}
    assert graph.get_all_asset_keys() == expected
    assert graph.get(SNAPSHOTS).parent_keys == {CANONICAL, SNAPSHOTS}  # its own previous day
    assert graph.get(CANONICAL).parent_keys == {raw_key(t.name) for t in topics}
    assert all(graph.get(target_key(f)).parent_keys == {CANONICAL} for f in targets)
    assert graph.get(REPORT).parent_keys == {CANONICAL}
    assert REPORT in defs.resolve_job_def(DAILY_JOB).asset_layer.executable_asset_keys
    assert {k.name for k in graph.asset_check_keys} >= {"conservation_check", "pk_consistency_check"}
    assert {k.name for k in graph.asset_check_keys} >= {"snapshot_anomalies_check"}
    for key in expected:
        assert graph.get(key).backfill_policy == dg.BackfillPolicy.single_run()
        assert graph.get(key).partitions_def.start.date().isoformat() == start_date()


def test_start_date_defaults_to_a_month_before_today():
    assert start_date({}, today=dt.date(2026, 11, 24)) == "2026-10-25"
    assert start_date({"CDC_START_DATE": "2023-05-01"}) == "2023-05-01"


def test_daily_schedule_runs_the_latest_day():
    defs = _workspace_defs()
    schedule = defs.resolve_schedule_def(f"{DAILY_JOB}_schedule")
    assert schedule.job_name == DAILY_JOB and schedule.cron_schedule == "0 2 * * *"
    at = dt.datetime(2024, 3, 5, 2, 0, tzinfo=dt.UTC)
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(
            instance=instance, scheduled_execution_time=at, repository_def=defs.get_repository_def()
        )
        requests = schedule.evaluate_tick(context).run_requests
    assert [(r.partition_key, r.run_key) for r in requests] == [("2024-03-04", "2024-03-04")]


def test_catalog_yaml_is_the_demos_catalog():
    written = yaml.safe_load((ROOT / "catalog.yaml").read_text())["topics"]
    assert [{k: v for k, v in t.items() if v} for t in written] == [
        {k: v for k, v in t.items() if v} for t in demo_topics()
    ]


def test_a_runs_one_jvm_starts_with_both_compilers_unless_the_settings_say(monkeypatch):
    from cdc_pipelines.runtime.session import SPARK_CONF_ENV
    from resources.spark import spark_resource

    monkeypatch.delenv(SPARK_CONF_ENV, raising=False)
    monkeypatch.setenv("CDC_SPARK_MASTER", "local[2]")
    assert "TieredStopAtLevel" not in spark_resource().spark_config["spark.driver.extraJavaOptions"]
    monkeypatch.setenv(SPARK_CONF_ENV, '{"cdc.jvm.quick_start": "true"}')
    assert "TieredStopAtLevel=1" in spark_resource().spark_config["spark.driver.extraJavaOptions"]
