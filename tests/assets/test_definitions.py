"""The Dagster definitions load, and the canonical asset materializes a partition in process."""

from __future__ import annotations

import shutil

import dagster as dg

from assets.canonical import canonical_changes
from assets.definitions import defs
from cdc_pipelines.io import read_canonical, read_rejects
from resources import LakeStorageResource, TopicCatalogResource, spark_resource
from tests.conftest import resource


def test_definitions_load_with_the_asset_graph():
    graph = defs.resolve_asset_graph()
    assert dg.AssetKey("canonical_changes") in graph.get_all_asset_keys()


def test_materialize_a_partition(spark, tmp_path):
    raw = tmp_path / "raw"
    for topic, fmt in (("orders", "oms-canal"), ("users", "oms-default")):
        day = raw / topic / "dt=2024-01-02"
        day.mkdir(parents=True)
        shutil.copy(resource(fmt, "seed.jsonl"), day / "part-0.jsonl")
    (raw / "users" / "dt=2024-01-02" / "part-1.jsonl").write_text("broken\n")
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "topics:\n  - {name: orders, format: oms-canal}\n  - {name: users, format: oms-default}\n"
        "  - {name: quiet, format: oms-shareplex}\n"
    )
    resources = {
        "pyspark": spark_resource(),
        "storage": LakeStorageResource(raw_root=str(raw), lake_root=str(tmp_path / "lake")),
        "catalog": TopicCatalogResource(path=str(catalog)),
    }
    for _ in range(2):  # a rerun replaces the partition instead of adding to it
        result = dg.materialize([canonical_changes], resources=resources, partition_key="2024-01-02")
        assert result.success
    meta = result.asset_materializations_for_node("canonical_changes")[0].metadata
    assert (meta["read"].value, meta["decoded"].value, meta["rejected"].value, meta["events"].value) == (9, 8, 1, 8)
    assert meta["per_topic"].value["quiet"] == {"read": 0, "decoded": 0, "rejected": 0, "events": 0}
    changes = read_canonical(spark, tmp_path / "lake" / "changes")
    assert changes.count() == 8
    assert {r.source_topic for r in changes.select("source_topic").distinct().collect()} == {"orders", "users"}
    assert read_rejects(spark, tmp_path / "lake" / "rejects").count() == 1
