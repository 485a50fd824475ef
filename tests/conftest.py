"""Shared fixtures: one local SparkSession for the whole test session, and seed fixture helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_pipelines.pipeline import decode_files
from cdc_pipelines.spark import spark_session

RESOURCES = Path(__file__).parent / "resources"
SAMPLES = Path(__file__).parent.parent / "cdc_pipelines" / "samples"


@pytest.fixture(scope="session")
def spark():
    session = spark_session(master="local[2]", conf={"spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


def _event_order(event: dict) -> tuple:
    return event["source_file"], event["source_line"], int((event["meta"] or {}).get("cdc.row_index", 0))


@pytest.fixture(scope="session")
def decode(spark):
    """decode(format_id, path, **options) -> (events by source_line, rejects, DecodedExtract)."""

    def run(format_id: str, path: Path | str, topic: str = "t", dt: str = "2024-01-01", **options: str):
        decoded = decode_files(spark, format_id, [path], topic=topic, dt=dt, options=options)
        events = sorted((r.asDict(recursive=True) for r in decoded.events.collect()), key=_event_order)
        rejects = sorted((r.asDict() for r in decoded.rejects.collect()), key=lambda r: r["source_line"])
        return events, rejects, decoded

    return run


def resource(*parts: str) -> Path:
    """A seed example file (the built-in samples) or, failing that, a test-only resource."""
    sample = SAMPLES.joinpath(*parts)
    return sample if sample.exists() else RESOURCES.joinpath(*parts)
