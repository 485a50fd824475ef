"""The quality asset checks run with the canonical asset in process and report each rule's figures."""

import shutil

import dagster as dg

from assets.canonical import canonical_asset
from assets.definitions import defs
from assets.quality import QUALITY_CHECKS
from resources import LakeStorageResource, QualityConfigResource, TopicCatalogResource, spark_resource
from tests.conftest import resource

DAY = "2024-01-02"
canonical_changes = canonical_asset([])  # no raw extract assets upstream: the checks need only the table
RULES = {"conservation_check", "image_presence_check", "timestamp_precision_check", "pk_consistency_check"}


def _resources(tmp_path, **quality):
    raw = tmp_path / "raw"
    for topic, fmt in (("orders", "oms-canal"), ("users", "dts-avro")):
        day = raw / topic / f"dt={DAY}"
        day.mkdir(parents=True)
        shutil.copy(resource(fmt, "seed.jsonl"), day / "part-0.jsonl")
    (raw / "users" / f"dt={DAY}" / "part-1.jsonl").write_text("broken\n")
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("topics:\n  - {name: orders, format: oms-canal}\n  - {name: users, format: dts-avro}\n")
    return {
        "pyspark": spark_resource(),
        "storage": LakeStorageResource(raw_root=str(raw), lake_root=str(tmp_path / "lake")),
        "catalog": TopicCatalogResource(path=str(catalog)),
        "quality": QualityConfigResource(**quality),
    }


def _evaluations(result) -> dict:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def test_definitions_register_one_check_per_rule():
    keys = defs.resolve_asset_graph().asset_check_keys
    assert {k.name for k in keys if k.asset_key == dg.AssetKey("canonical_changes")} == RULES


def test_materialize_with_checks(spark, tmp_path):
    resources = _resources(tmp_path, max_reject_rate=0.2)
    result = dg.materialize([canonical_changes, *QUALITY_CHECKS], resources=resources, partition_key=DAY)
    assert result.success
    checks = _evaluations(result)
    assert set(checks) == RULES
    assert {n for n, e in checks.items() if e.passed} == RULES - {"pk_consistency_check"}
    conservation = checks["conservation_check"].metadata
    # 4 canal + 5 avro messages decoded, 1 broken line rejected: 1/10 is under the configured 20 %
    assert conservation["info"].value["read"] == 10 and conservation["info"].value["rejected"] == 1
    assert checks["conservation_check"].severity == dg.AssetCheckSeverity.ERROR
    pk = checks["pk_consistency_check"]
    assert pk.severity == dg.AssetCheckSeverity.WARN
    # the canal seed's DELETE names pkNames int8/int16 that its image does not hold
    assert pk.metadata["failed"].value == 1
    assert pk.metadata["examples"].value[0]["reason"] == "PK value before int8 missing, before int16 missing"


def test_conservation_check_blocks_over_the_reject_rate(spark, tmp_path):
    resources = _resources(tmp_path)  # default 5 % reject rate
    result = dg.materialize(
        [canonical_changes, *QUALITY_CHECKS],
        resources=resources,
        partition_key=DAY,
        selection=dg.AssetSelection.checks(*QUALITY_CHECKS) | dg.AssetSelection.assets(canonical_changes),
        raise_on_error=False,
    )
    conservation = _evaluations(result)["conservation_check"]
    assert not conservation.passed and conservation.severity == dg.AssetCheckSeverity.ERROR
    assert conservation.metadata["info"].value["reject_reasons"] == [{"reason": "not a valid JSON object", "count": 1}]
