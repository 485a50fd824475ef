"""The demo's topic catalog: one topic per format, a kcat-enveloped topic, a few re-emitted targets, and
the topic whose tables are snapshotted."""

from __future__ import annotations

from cdc_pipelines.formats import SELF_CONTAINED

KCAT_TOPIC = "oms-canal-kcat"
KCAT_SOURCE = "oms-canal"
OPTIONS = {"datahub-tuple": {"table": "demo"}, "oms-debezium-smt": {"table": "demo"}}
SNAPSHOT_TOPICS = ("oms-canal",)  # one topic per source table: the demo's topics all carry the same tables
TARGETS = {"oms-default": ["oms-canal", "dts-avro"], "dts-canal": ["oms-canal"], KCAT_TOPIC: ["dataworks-json"]}


def demo_topics() -> list[dict]:
    """Catalog entries (as written to YAML) of every demo topic."""
    topics = [{"name": f, "format": f, "options": OPTIONS.get(f, {})} for f in SELF_CONTAINED]
    topics.append({"name": KCAT_TOPIC, "format": KCAT_SOURCE, "envelope": "kcat"})
    topics = [t | ({"snapshot": True} if t["name"] in SNAPSHOT_TOPICS else {}) for t in topics]
    return [t | ({"targets": TARGETS[t["name"]]} if t["name"] in TARGETS else {}) for t in topics]
