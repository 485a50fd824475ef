"""kcat -J envelopes: the payload decodes exactly as the bare message; offsets become lineage."""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.engines.spark import SparkEngine
from cdc_pipelines.extract.catalog import CatalogError, load_catalog
from cdc_pipelines.formats import SELF_CONTAINED, get_codec
from cdc_pipelines.lake.io import read_canonical
from cdc_pipelines.lake.run_counts import write_counts
from tests.conftest import resource
from tests.decode.oracles import encode_local
from tests.quality.rows import rules_of


def _envelopes(messages: list[str]) -> list[str]:
    return [
        json.dumps(
            {"topic": "orders", "partition": 2, "offset": 100 + i, "tstype": "create", "ts": 1704067200123 + i,
             "key": None, "payload": m}
        )
        for i, m in enumerate(messages)
    ]  # fmt: skip


def _strip(event: dict) -> dict:
    kept = {k: v for k, v in event.items() if k not in ("event_id", "source_file", "meta")}
    return kept | {"meta": {k: v for k, v in (event["meta"] or {}).items() if not k.startswith("cdc.kafka.")}}


def test_kcat_payloads_decode_like_the_bare_messages(decode, tmp_path):
    bare = resource("oms-canal", "seed.jsonl")
    messages = bare.read_text().splitlines()
    wrapped = tmp_path / "kcat.jsonl"
    broken = ['{"topic": "orders", "payload": "x"}', "not json", json.dumps({"partition": 0, "offset": 9})]
    wrapped.write_text("\n".join(_envelopes([*messages, '{"truncated": ']) + broken) + "\n")
    expected, _, _ = decode("oms-canal", bare)
    events, rejects, decoded = decode("oms-canal", wrapped, envelope="kcat")
    *events, tombstone = events
    assert [_strip(e) for e in events] == [_strip(e) for e in expected]
    first = events[0]["meta"]
    assert {k: v for k, v in first.items() if k.startswith("cdc.kafka.")} == {
        "cdc.kafka.topic": "orders",
        "cdc.kafka.partition": "2",
        "cdc.kafka.offset": "100",
        "cdc.kafka.tstype": "create",
        "cdc.kafka.ts": "1704067200123",
    }
    assert sorted(int(e["meta"]["cdc.kafka.offset"]) for e in events) == sorted(
        100 + e["source_line"] - 1 for e in events
    )
    n = len(messages) + 1
    assert [(r["source_line"], r["reason"], r["raw"]) for r in rejects] == [
        (n, "not a valid JSON object", '{"truncated": '),  # a bad payload: the decoder's reason, the payload
        (n + 1, "not a kcat envelope (no offset)", broken[0]),
        (n + 2, "not a kcat envelope (no offset)", broken[1]),
    ]
    # an envelope without a payload is a tombstone: one OTHER event, counted as decoded
    assert (tombstone["source_line"], tombstone["op"], tombstone["raw_op"], tombstone["meta"]) == (
        n + 3,
        "OTHER",
        "TOMBSTONE",
        {"cdc.kafka.partition": "0", "cdc.kafka.offset": "9"},
    )
    assert decoded.counts == {"read": n + 3, "decoded": n, "rejected": 3, "filtered": 0, "events": len(events) + 1}


def test_a_debezium_delete_and_its_tombstone(decode, tmp_path):
    """Debezium's default after a delete: the delete, then a null-valued message with the same key.
    The tombstone is an event no target encodes (each skips it with the reason), never a reject."""
    delete = json.dumps({"before": {"id": 7, "name": "x"}, "after": None, "op": "d", "ts_ms": 1704067200000,
                         "source": {"db": "shop", "table": "orders"}})  # fmt: skip
    envelopes = [
        {"topic": "dbz", "partition": 0, "offset": 41, "key": '{"id":7}', "payload": delete},
        {"topic": "dbz", "partition": 0, "offset": 42, "key": '{"id":7}', "payload": None},
    ]
    path = tmp_path / "dbz.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in envelopes))
    events, rejects, decoded = decode("oms-debezium", path, envelope="kcat")
    assert rejects == [] and decoded.counts == {"read": 2, "decoded": 2, "rejected": 0, "filtered": 0, "events": 2}
    assert [(e["op"], e["raw_op"], e["table_name"], e["meta"]["cdc.kafka.key"]) for e in events] == [
        ("DELETE", "d", "orders", '{"id":7}'),
        ("OTHER", "TOMBSTONE", None, '{"id":7}'),
    ]
    for target in SELF_CONTAINED:
        if get_codec(target).encode is None:
            continue
        messages, skipped = encode_local(events[1:], target)
        assert messages == [] and [why for _, why in skipped] == [
            "a Kafka tombstone (null value) carries no change to encode"
        ], target


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{name: t, format: oms-canal, envelope: kafkacat}", "unknown envelope 'kafkacat'"),
        ("{name: t, format: dts-avro, envelope: kcat}", "dts-avro reads its own files"),
    ],
)
def test_catalog_checks_the_envelope(tmp_path, entry, message):
    path = tmp_path / "catalog.yaml"
    path.write_text(f"topics:\n  - {entry}\n")
    with pytest.raises(CatalogError, match=message):
        load_catalog(path)


def test_catalog_reads_the_envelope(tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text("topics:\n  - {name: t, format: oms-canal, envelope: kcat, targets: [oms-default]}\n")
    assert [(t.envelope, t.targets) for t in load_catalog(path)] == [("kcat", ("oms-default",))]


def test_a_debezium_topic_with_tombstones_passes_its_quality_checks(spark, tmp_path):
    """Through Spark and the lake: inserts, updates and deletes each delete followed by its tombstone,
    as Debezium sends them by default; no rejects, and every quality rule passes."""
    messages = []
    for n in range(1, 7):
        row = {"id": n, "name": f"n{n}"}
        source = {"db": "shop", "table": "orders", "ts_ms": 1704067200000 + n}
        messages.append(({"id": n}, {"before": None, "after": row, "op": "c", "ts_ms": 1704067200000 + n,
                                     "source": source}))  # fmt: skip
        if n % 2 == 0:
            messages.append(({"id": n}, {"before": row, "after": None, "op": "d", "ts_ms": 1704067201000 + n,
                                         "source": source}))  # fmt: skip
            messages.append(({"id": n}, None))
    path = tmp_path / "dbz.jsonl"
    path.write_text("".join(
        json.dumps({"topic": "dbz", "partition": 0, "offset": i, "key": json.dumps(key),
                    "ts": 1704067200123, "payload": None if value is None else json.dumps(value)}) + "\n"
        for i, (key, value) in enumerate(messages)
    ))  # fmt: skip
    lake = tmp_path / "lake"
    decoded = decode_files(spark, "oms-debezium", [path], topic="dbz", dt="2024-01-01", envelope="kcat")
    counts = write_decoded(decoded, lake)
    assert counts == {"read": 12, "decoded": 12, "rejected": 0, "filtered": 0, "events": 12}
    write_counts(spark, lake, "2024-01-01", {"dbz": counts})
    changes = read_canonical(spark, str(lake / "changes"))
    assert sorted(changes.groupBy("op", "raw_op").count().collect()) == [
        ("DELETE", "d", 3), ("INSERT", "c", 6), ("OTHER", "TOMBSTONE", 3)
    ]  # fmt: skip
    results = rules_of(SparkEngine(spark), lake, "2024-01-01")
    assert {name: r.checks for name, r in results.items() if not r.passed} == {}
    tombstones = changes.where("raw_op = 'TOMBSTONE'").select("event_time", "sync_time").collect()
    assert [(t.event_time, t.sync_time.isoformat()) for t in tombstones] == [
        (None, "2024-01-01T00:00:00.123000")
    ] * 3  # the Kafka timestamp
