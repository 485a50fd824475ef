"""Shared fixtures: one local SparkSession per test session (each pytest-xdist worker's), and seed fixture helpers."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path

import pytest

from tests.decode.oracles import decode_paths, encode_local

# the tests' partitions are fixed days of 2024 (the default start is a month before today)
os.environ.setdefault("CDC_START_DATE", "2024-01-01")
# a pytest-xdist worker runs under execnet, whose `__main__` has no `__file__`: pyspark.sql.connect (which
# GX imports) then takes the process for a doctest run without Spark Connect's packages, and exits
if getattr(sys.modules["__main__"], "__spec__", None) is None and not hasattr(sys.modules["__main__"], "__file__"):
    sys.modules["__main__"].__file__ = __file__

RESOURCES = Path(__file__).parent / "resources"
SAMPLES = Path(__file__).parent.parent / "cdc_pipelines" / "samples"


def pytest_collection_modifyitems(items):
    """Tests that use the SparkSession carry the `spark` mark: scripts/test-spark runs them (a JVM in each
    of its workers), scripts/test the rest (codecs, extracts, the in-process decode) without starting Spark."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    # the snapshot modules hold the longest tests (up to 200 s): handed to the workers first, so that the
    # two end together instead of one running the last long module alone
    items.sort(key=lambda item: not item.nodeid.startswith("tests/snapshots/"))


@pytest.fixture(scope="session")
def spark():
    from cdc_pipelines.runtime.session import spark_session

    # one session for ~300 tests, each with tables of its own: Delta's log cache (1000 tables by default)
    # would hold them all, so it keeps the last 50, and the heap has room for the rest
    conf = {"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "3g",
            "spark.databricks.delta.delta.log.cacheSize": "50"}  # fmt: skip
    session = spark_session(master="local[2]", conf=conf)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    """One Kafka broker (`tests.extract.kafka_broker`) for the session's Kafka system tests; each module makes
    its own topics on it."""
    from tests.extract.kafka_broker import start_broker

    running = start_broker(tmp_path_factory.mktemp("kafka"))
    yield running
    running.stop()


@pytest.fixture(scope="session")
def decode():
    """decode(format_id, path, envelope=None, **options) -> (events in input order, rejects by line, LocalDecode).

    In process, without Spark: the codec functions and the pairing the Spark runner also runs.
    `LocalDecode.counts` holds read / decoded / rejected / events.
    """

    def run(format_id: str, path: Path | str, topic: str = "t", dt: str = "2024-01-01", envelope=None, **options):
        decoded = decode_paths(format_id, [path], topic=topic, dt=dt, options=options, envelope=envelope)
        return decoded.events, decoded.rejects, decoded

    return run


@pytest.fixture(scope="session")
def roundtrip(decode, tmp_path_factory):
    """roundtrip(source_id, path, target_id, **target_options) -> (events, re-decoded events, counts), in process.

    Decodes `path`, encodes the events into `target_id` in input order (binary messages as
    `value_b64` lines), decodes the written messages again with `target_id`; counts as the writer
    gives them: `written` messages, `skipped` events, `encoded` events.
    """

    def run(source_id: str, path, target_id: str, source_options=None, decode_options=None, **target_options):
        events, _, _ = decode(source_id, path, **(source_options or {}))
        messages, skipped = encode_local(events, target_id, target_options)
        out = tmp_path_factory.mktemp("roundtrip") / f"{target_id}.jsonl"
        out.write_text("".join(_message_line(m) + "\n" for _, _, m in messages))
        again, _, _ = decode(target_id, out, **(decode_options or {}))
        encoded = sum(1 for _, part, _ in messages if part == 0)
        return events, again, {"written": len(messages), "skipped": len(skipped), "encoded": encoded}

    return run


def _message_line(message: str | bytes) -> str:
    if isinstance(message, bytes):
        return json.dumps({"value_b64": base64.b64encode(message).decode()})
    return message


CARRIED_EVERYWHERE = ("op", "db", "table_name", "before", "after", "ddl")
# every canonical field a same-format round trip keeps (all but the lineage of where it was read)
SAME_FORMAT_FIELDS = (
    "op", "raw_op", "db", "table_name", "event_time", "event_time_unit", "sync_time", "pk_columns", "before",
    "after", "column_types", "source_types", "ddl", "meta", "tx_id", "seq", "position",
)  # fmt: skip


def carried(event: dict, fields=CARRIED_EVERYWHERE) -> dict:
    """The fields of an event a target format carries (for decode(encode(x)) == x comparisons)."""
    return {f: event[f] for f in fields}


def bag(events, fields=SAME_FORMAT_FIELDS) -> list[str]:
    """The events' fields as a sorted list of JSON texts.

    Compared as a multiset: these tests check what each event carries, not the line order of the
    re-encoded file (which `write_encoded` is responsible for).
    """
    return sorted(json.dumps(carried(e, fields), sort_keys=True, default=str) for e in events)


def parse(text: str):
    """JSON with every number kept as its digits."""
    return json.loads(text, parse_float=str, parse_int=str)


def resource(*parts: str) -> Path:
    """A seed example file (the built-in samples) or, failing that, a test-only resource."""
    sample = SAMPLES.joinpath(*parts)
    return sample if sample.exists() else RESOURCES.joinpath(*parts)


@pytest.fixture(params=["local", pytest.param("spark", marks=pytest.mark.spark)])
def engine(request):
    """Each engine in turn, so that one test body holds both to a behaviour: the local one runs in
    scripts/test, Spark's (over the test session) in scripts/test-spark."""
    if request.param == "local":
        from cdc_pipelines.engines.local import LocalEngine

        return LocalEngine()
    from cdc_pipelines.engines.spark import SparkEngine

    return SparkEngine(request.getfixturevalue("spark"))
