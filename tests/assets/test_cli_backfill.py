"""A two-day backfill through the real `dagster` CLI, against a temporary DAGSTER_HOME: one run (the
single-run backfill policy) materializes the chain of assets for both days, the days decoded by the pool."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from deltalake import DeltaTable

from assets.keys import CANONICAL, SNAPSHOTS, raw_key, target_key
from cdc_pipelines.decode.pool import MAX_BYTES_SETTING
from cdc_pipelines.lake.run_counts import read_counts
from cdc_pipelines.snapshots.store import read_summary
from tests.conftest import resource

ROOT = Path(__file__).resolve().parents[2]
DAYS = ["2024-01-01", "2024-01-02"]


@pytest.mark.system
def test_dagster_cli_materializes_a_partition_range(spark, tmp_path, monkeypatch):
    for day in DAYS:
        folder = tmp_path / "raw" / "orders" / f"dt={day}"
        folder.mkdir(parents=True)
        shutil.copy(resource("oms-canal", "seed.jsonl"), folder / "part-0.jsonl")
    topic = "{name: orders, format: oms-canal, targets: [oms-debezium], snapshot: true}"
    (tmp_path / "catalog.yaml").write_text(f"topics:\n  - {topic}\n")
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "CDC_CATALOG": str(tmp_path / "catalog.yaml"),
        "CDC_RAW_ROOT": str(tmp_path / "raw"),
        "CDC_LAKE_ROOT": str(tmp_path / "lake"),
        "CDC_SPARK_MASTER": "local[2]",
        # the days decoded by the pool, whose processes start from the `dagster` command's own process
        "CDC_SPARK_CONF": json.dumps({MAX_BYTES_SETTING: "0"}),
        "PYTHONPATH": str(ROOT),
    }
    dagster = Path(sys.executable).parent / "dagster"
    command = [str(dagster), "asset", "materialize", "-m", "assets.definitions", "-d", str(ROOT)]
    # every asset but the quality report (its GX suite takes a minute a day; tests/assets/test_demo.py runs it)
    selection = ",".join(
        k.to_user_string() for k in (raw_key("orders"), CANONICAL, target_key("oms-debezium"), SNAPSHOTS)
    )
    command += ["--select", selection, "--partition-range", f"{DAYS[0]}...{DAYS[-1]}"]
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
        assert [r.status for r in runs] == [dg.DagsterRunStatus.SUCCESS]
        # table_snapshots depends on its own previous day: the range still runs as one run, in order
        for key in (raw_key("orders"), CANONICAL, target_key("oms-debezium"), SNAPSHOTS):
            assert instance.get_materialized_partitions(key) == set(DAYS), key
        checks = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey(CANONICAL, "conservation_check"), limit=10
        )
        # each day's evaluation is recorded against its partition, plus the run's summary
        assert {c.partition: c.status.value for c in checks} == {**dict.fromkeys(DAYS, "SUCCEEDED"), None: "SUCCEEDED"}
    assert all(read_counts(spark, tmp_path / "lake", day)["orders"]["read"] == 4 for day in DAYS)
    files = DeltaTable(str(tmp_path / "lake" / "changes")).file_uris()
    assert files and all(f.endswith(".c000.snappy.parquet") for f in files)  # the pool's files, both days
    summaries = [read_summary(tmp_path / "lake" / "snapshots", day) for day in DAYS]
    assert [s["previous_dt"] for s in summaries] == [None, *DAYS[:-1]]
