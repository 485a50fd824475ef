"""The demo's topic catalog: one topic per format, a kcat-enveloped topic, and a few re-emitted targets."""

from __future__ import annotations

from cdc_pipelines.formats import FORMAT_IDS

KCAT_TOPIC = "oms-canal-kcat"
KCAT_SOURCE = "oms-canal"
OPTIONS = {"datahub-tuple": {"table": "demo"}, "oms-debezium-smt": {"table": "demo"}}
TARGETS = {"oms-default": ["oms-canal", "dts-avro"], "dts-canal": ["oms-canal"], KCAT_TOPIC: ["dataworks-json"]}


def demo_topics() -> list[dict]:
    """Catalog entries (as written to YAML) of every demo topic."""
    topics = [{"name": f, "format": f, "options": OPTIONS.get(f, {})} for f in FORMAT_IDS]
    topics.append({"name": KCAT_TOPIC, "format": KCAT_SOURCE, "envelope": "kcat"})
    return [t | ({"targets": TARGETS[t["name"]]} if t["name"] in TARGETS else {}) for t in topics]
