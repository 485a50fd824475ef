"""Dagster resources: configuration only (Spark, storage roots, topic catalog, quality thresholds)."""

from resources.catalog import TopicCatalogResource
from resources.quality import QualityConfigResource
from resources.spark import spark_resource
from resources.storage import LakeStorageResource

__all__ = ["LakeStorageResource", "QualityConfigResource", "TopicCatalogResource", "spark_resource"]
