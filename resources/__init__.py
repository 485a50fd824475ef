"""Dagster resources: configuration only (Spark, storage roots, topic catalog)."""

from resources.catalog import TopicCatalogResource
from resources.spark import spark_resource
from resources.storage import LakeStorageResource

__all__ = ["LakeStorageResource", "TopicCatalogResource", "spark_resource"]
