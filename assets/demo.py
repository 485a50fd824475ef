"""The demo run: sample extracts for every format, then the Dagster job over their partitions.

Runs in process against a local Dagster instance under `<out>/dagster_home`, so `dagster dev`
started with that DAGSTER_HOME shows the runs afterwards.
"""

import datetime as dt
import os
from pathlib import Path

import dagster as dg
import yaml

from assets.canonical import canonical_changes
from assets.quality import QUALITY_CHECKS
from cdc_pipelines.demo import generate
from cdc_pipelines.formats import FORMAT_IDS
from resources import LakeStorageResource, QualityConfigResource, TopicCatalogResource, spark_resource


def run_demo(out: str | Path, days: int, per_day: int = 60, start: dt.date = dt.date(2024, 1, 1)) -> dict:
    """Generate `days` days of extracts for all formats and materialize the canonical table for each."""
    out = Path(out).resolve()
    day_list = [start + dt.timedelta(days=i) for i in range(days)]
    generate(out / "raw", day_list, per_day)
    catalog = out / "catalog.yaml"
    options = {"datahub-tuple": {"table": "demo"}, "oms-debezium-smt": {"table": "demo"}}
    topics = [{"name": f, "format": f, "options": options.get(f, {})} for f in FORMAT_IDS]
    catalog.write_text(yaml.safe_dump({"topics": topics}, sort_keys=False))
    os.environ.setdefault("DAGSTER_HOME", str(out / "dagster_home"))
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
    resources = {
        "pyspark": spark_resource(),
        "storage": LakeStorageResource(raw_root=str(out / "raw"), lake_root=str(out / "lake")),
        "catalog": TopicCatalogResource(path=str(catalog)),
        "quality": QualityConfigResource(),
    }
    results = {}
    with dg.DagsterInstance.get() as instance:
        for day in day_list:
            result = dg.materialize(
                [canonical_changes, *QUALITY_CHECKS],
                resources=resources,
                partition_key=day.isoformat(),
                instance=instance,
                raise_on_error=False,
            )
            meta = result.asset_materializations_for_node("canonical_changes")[0].metadata if result.success else {}
            checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
            results[day.isoformat()] = {
                "success": result.success,
                **{k: meta[k].value for k in ("read", "decoded", "rejected", "events") if k in meta},
                "checks": checks,
            }
    return {
        "lake": str(out / "lake"),
        "raw": str(out / "raw"),
        "dagster_home": os.environ["DAGSTER_HOME"],
        "days": results,
    }
