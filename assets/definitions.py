"""The Definitions `dagster dev` loads (see workspace.yaml). Locations come from the environment."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from assets.canonical import canonical_changes
from assets.quality import QUALITY_CHECKS
from resources import LakeStorageResource, QualityConfigResource, TopicCatalogResource, spark_resource

ROOT = Path(__file__).resolve().parent.parent

defs = dg.Definitions(
    assets=[canonical_changes],
    asset_checks=QUALITY_CHECKS,
    resources={
        "pyspark": spark_resource(),
        "storage": LakeStorageResource(
            raw_root=os.environ.get("CDC_RAW_ROOT", str(ROOT / "out" / "raw")),
            lake_root=os.environ.get("CDC_LAKE_ROOT", str(ROOT / "out" / "lake")),
        ),
        "catalog": TopicCatalogResource(path=os.environ.get("CDC_CATALOG", str(ROOT / "catalog.yaml"))),
        "quality": QualityConfigResource(),
    },
    # one JVM for the whole run: the multiprocess executor would start one per step
    executor=dg.in_process_executor,
)
