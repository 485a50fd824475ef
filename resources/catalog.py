"""The topic catalog resource: a YAML file listing topics, formats, options and targets."""

from __future__ import annotations

import dagster as dg

from cdc_pipelines.extract.catalog import Topic, load_catalog


class TopicCatalogResource(dg.ConfigurableResource):
    path: str

    def topics(self) -> list[Topic]:
        return load_catalog(self.path)
