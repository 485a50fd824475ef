"""Two days in one ranged run (as a backfill runs them): raw, canonical and target assets, each day's
metadata its own; a rerun of one day replaces it without duplicates."""

import shutil
from pathlib import Path

import dagster as dg
from pyspark.sql import functions as F

from assets.graph import build_assets, build_resources
from assets.keys import CANONICAL, REPORT, SNAPSHOTS, raw_key, target_key
from cdc_pipelines.decode.days import target_path
from cdc_pipelines.demo.extracts import wrap_kcat
from cdc_pipelines.extract.catalog import load_catalog
from cdc_pipelines.lake.io import read_canonical, read_rejects
from tests.conftest import resource

DAYS = ("2024-01-02", "2024-01-03")
RANGE = {"dagster/asset_partition_range_start": DAYS[0], "dagster/asset_partition_range_end": DAYS[1]}
CATALOG = """topics:
  - {name: orders, format: oms-canal, targets: [oms-default]}
  - {name: users, format: oms-default, envelope: kcat, targets: [oms-default]}
  - {name: quiet, format: oms-shareplex}
"""


def _inputs(tmp_path: Path) -> dict:
    raw = tmp_path / "raw"
    for day in DAYS:
        (raw / "orders" / f"dt={day}").mkdir(parents=True)
        shutil.copy(resource("oms-canal", "seed.jsonl"), raw / "orders" / f"dt={day}" / "part-0.jsonl")
    wrap_kcat(resource("oms-default", "seed.jsonl"), raw / "users" / f"dt={DAYS[0]}" / "part-0.jsonl", "users")
    (raw / "users" / f"dt={DAYS[1]}").mkdir(parents=True)
    (raw / "users" / f"dt={DAYS[1]}" / "part-0.jsonl").write_text("not an envelope\n")
    (tmp_path / "catalog.yaml").write_text(CATALOG)
    return build_resources(
        tmp_path / "catalog.yaml", raw, tmp_path / "lake", data_docs=False
    )  # GX: see test_cli_quality


def _per_day(result: dg.ExecuteInProcessResult, key: dg.AssetKey, fields) -> dict:
    events = result.get_asset_materialization_events()
    return {
        e.materialization.partition: tuple(e.materialization.metadata[f].value for f in fields)
        for e in events
        if e.materialization.asset_key == key
    }


def _lake_state(spark, tmp_path: Path) -> dict:
    changes = read_canonical(spark, tmp_path / "lake" / "changes")
    by_day = {r.dt: (r["count"], r["ids"]) for r in changes.groupBy("dt").agg(
        F.count("*").alias("count"), F.count_distinct("event_id").alias("ids")).collect()}  # fmt: skip
    written = spark.read.text(str(target_path(tmp_path / "lake", "oms-default"))).groupBy("dt").count().collect()
    return {"changes": by_day, "target_lines": {str(r.dt): r["count"] for r in written}}


def test_two_days_in_one_run_then_a_rerun_of_one(spark, tmp_path):
    resources = _inputs(tmp_path)
    graph = build_assets(load_catalog(tmp_path / "catalog.yaml"))
    # the report and the snapshots have tests of their own (test_demo, test_snapshots_asset)
    assets = [a for a in graph if not isinstance(a, dg.AssetChecksDefinition) and a.key not in (REPORT, SNAPSHOTS)]
    result = dg.materialize(assets, resources=resources, tags=RANGE)
    assert result.success

    users_files = _per_day(result, raw_key("users"), ("files",))
    assert users_files == {DAYS[0]: (1,), DAYS[1]: (1,)}
    assert _per_day(result, raw_key("quiet"), ("files", "bytes")) == {day: (0, 0) for day in DAYS}
    # orders: 4 canal messages a day; users: 4 enveloped OMS messages, then one bad line
    canonical = _per_day(result, CANONICAL, ("read", "decoded", "rejected", "events"))
    assert canonical == {DAYS[0]: (8, 8, 0, 8), DAYS[1]: (5, 4, 1, 4)}
    target = _per_day(result, target_key("oms-default"), ("events", "written", "skipped"))
    assert target == {DAYS[0]: (8, 8, 0), DAYS[1]: (4, 4, 0)}

    before = _lake_state(spark, tmp_path)
    assert before == {"changes": {DAYS[0]: (8, 8), DAYS[1]: (4, 4)}, "target_lines": {DAYS[0]: 8, DAYS[1]: 4}}
    kafka = read_canonical(spark, tmp_path / "lake" / "changes").where(F.col("source_topic") == "users")
    assert sorted(int(r.o) for r in kafka.select(F.col("meta")["cdc.kafka.offset"].alias("o")).collect()) == list(
        range(4)
    )
    rejects = read_rejects(spark, tmp_path / "lake" / "rejects").collect()
    assert [(r.dt, r.reason, r.raw) for r in rejects] == [
        (DAYS[1], "not a kcat envelope (no offset)", "not an envelope")
    ]

    again = dg.materialize(assets, resources=resources, partition_key=DAYS[1])
    assert again.success
    assert _per_day(again, CANONICAL, ("read", "decoded", "rejected", "events")) == {DAYS[1]: (5, 4, 1, 4)}
    assert _lake_state(spark, tmp_path) == before
    assert read_rejects(spark, tmp_path / "lake" / "rejects").count() == 1
