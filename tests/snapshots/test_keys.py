"""Keys where the format names none: `keys:` in the catalog (per topic) and `snapshot_days(keys=...)`;
a Debezium topic, whose messages carry no key names, then gives a snapshot with the reference's keys.
Read through kcat envelopes, a Debezium topic may take them from the Kafka message key instead
(`keys_from: kafka`, `snapshot_days(kafka_keys=...)`)."""

import datetime as dt
import json

import pytest

from cdc_pipelines.demo.extracts import TABLES, canonical_events, write_extract
from cdc_pipelines.extract.catalog import CatalogError, kafka_key_topics, load_catalog, snapshot_keys
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.effects import kafka_key_columns
from cdc_pipelines.snapshots.store import table_root
from tests.decode.oracles import decode_paths
from tests.lake.partitions import write_partitions
from tests.snapshots.events import changes_df
from tests.snapshots.reference import fold

DAY = dt.date(2024, 1, 1)


def test_catalog_keys(tmp_path):
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("""topics:
  - {name: a, format: oms-debezium, snapshot: true, keys: {shop.orders: [order_id], shop.items: [order_id, line]}}
  - {name: b, format: oms-debezium, keys: {shop.orders: [other]}}
""")
    topics = load_catalog(catalog)
    assert topics[0].keys == {"shop.orders": ("order_id",), "shop.items": ("order_id", "line")}
    assert snapshot_keys(topics) == {"shop.orders": ["order_id"], "shop.items": ["order_id", "line"]}
    catalog.write_text("topics:\n  - {name: a, format: oms-debezium, keys: {shop.orders: order_id}}\n")
    with pytest.raises(CatalogError, match="keys must map db.table to a list"):
        load_catalog(catalog)


def test_a_debezium_topic_with_keys_gives_the_reference_snapshot(spark, tmp_path):
    truth = list(canonical_events(DAY, 30))
    state: dict = {}
    fold(state, truth)
    path = tmp_path / "raw" / "part-0.jsonl"
    write_extract("oms-debezium", truth, path, malformed=False)
    events = decode_paths("oms-debezium", [path], topic="dbz", dt=DAY.isoformat()).events
    assert not any(e["pk_columns"] for e in events if e["op"] in ("INSERT", "UPDATE", "DELETE"))
    write_partitions(changes_df(spark, events), tmp_path / "lake" / "changes")
    keys = {f"{db}.{table}": pk for (db, table), (pk, _) in TABLES.items()}
    summary = snapshot_days(spark, tmp_path / "lake", [DAY.isoformat()], keys=keys)[DAY.isoformat()]
    assert summary["skipped_tables"] == [] and summary["anomalies"] == 0
    for (db, table), rows in state.items():
        current = spark.read.format("delta").load(join(table_root(tmp_path / "lake" / "snapshots", db, None, table),
                                                       "current"))  # fmt: skip
        assert {tuple(json.loads(r._cdc_key)) for r in current.collect()} == set(rows), (db, table)


def test_catalog_keys_from_kafka(tmp_path):
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("""topics:
  - {name: a, format: oms-debezium, envelope: kcat, snapshot: true, keys_from: kafka}
  - {name: b, format: oms-debezium, envelope: kcat, keys_from: kafka}
  - {name: c, format: oms-debezium, envelope: kcat, snapshot: true}
""")
    topics = load_catalog(catalog)
    assert [t.keys_from for t in topics] == ["kafka", "kafka", None]
    assert kafka_key_topics(topics) == ["a"]  # only topics that feed the snapshots
    for entry, message in [
        ("{name: a, format: oms-debezium, keys_from: kafka}", "keys_from: kafka needs envelope: kcat"),
        ("{name: a, format: oms-debezium, envelope: kcat, keys_from: value}", "keys_from must be kafka"),
    ]:
        catalog.write_text(f"topics:\n  - {entry}\n")
        with pytest.raises(CatalogError, match=message):
            load_catalog(catalog)


def test_kafka_key_columns():
    keys = ['{"id":1001}', '{"schema":{"type":"struct","fields":[]},"payload":{"order_id":1,"line":2}}',
            '{"schema":"x","payload":"y"}', '"1001"', "{}", "not json", None]  # fmt: skip
    got = [kafka_key_columns(k) for k in keys]
    assert got == [["id"], ["order_id", "line"], ["schema", "payload"], None, None, None, None]


ITEM_KEY_SCHEMA = {"type": "struct", "name": "shop.items.Key", "optional": False,
                   "fields": [{"field": "order_id", "type": "int32"}, {"field": "line", "type": "int32"}]}  # fmt: skip


def _kcat(messages: list[tuple]) -> str:
    """kcat -J lines of Debezium (key, value) pairs; a None value is a tombstone."""
    lines = []
    for offset, (key, value) in enumerate(messages):
        envelope = {"topic": "dbz", "partition": 0, "offset": offset, "ts": 1704067200000 + offset,
                    "key": None if key is None else json.dumps(key),
                    "payload": None if value is None else json.dumps(value)}  # fmt: skip
        lines.append(json.dumps(envelope) + "\n")
    return "".join(lines)


def _dbz(table: str, op: str, before=None, after=None, n=0) -> dict:
    return {"before": before, "after": after, "op": op, "ts_ms": 1704067200000 + n,
            "source": {"db": "shop", "table": table}}  # fmt: skip


def _item_key(order_id, line):
    return {"schema": ITEM_KEY_SCHEMA, "payload": {"order_id": order_id, "line": line}}


def test_a_debezium_kcat_topic_takes_its_keys_from_the_kafka_key(spark, tmp_path):
    """orders: a plain key; items: a key with its schema, fields not in name order; heap: no Kafka key,
    skipped; notes: configured `keys` win over the Kafka key."""
    o1, o2 = {"id": 1, "name": "a"}, {"id": 2, "name": "b"}
    i11, i12 = {"order_id": 1, "line": 1, "qty": 5}, {"order_id": 1, "line": 2, "qty": 7}
    messages = [
        ({"id": 1}, _dbz("orders", "c", after=o1, n=1)),
        ({"id": 2}, _dbz("orders", "c", after=o2, n=2)),
        ({"id": 1}, _dbz("orders", "u", before=o1, after=o1 | {"name": "a2"}, n=3)),
        ({"id": 2}, _dbz("orders", "d", before=o2, n=4)),
        ({"id": 2}, None),  # the delete's tombstone
        (_item_key(1, 1), _dbz("items", "c", after=i11, n=5)),
        (_item_key(1, 2), _dbz("items", "c", after=i12, n=6)),
        (_item_key(1, 1), _dbz("items", "d", before=i11, n=7)),
        (None, _dbz("heap", "c", after={"x": 1}, n=8)),
        ({"id": 1}, _dbz("notes", "c", after={"id": 1, "code": "a"}, n=9)),
        ({"id": 2}, _dbz("notes", "c", after={"id": 2, "code": "a"}, n=10)),
    ]
    path = tmp_path / "raw" / "dbz.jsonl"
    path.parent.mkdir()
    path.write_text(_kcat(messages))
    events = decode_paths("oms-debezium", [path], topic="dbz", dt=DAY.isoformat(), envelope="kcat").events
    assert not any(e["pk_columns"] for e in events)
    lake = tmp_path / "lake"
    write_partitions(changes_df(spark, events), lake / "changes")
    summary = snapshot_days(spark, lake, [DAY.isoformat()], keys={"shop.notes": ["code"]}, kafka_keys=["dbz"])
    summary = summary[DAY.isoformat()]
    assert [(s["table"], s["reason"], s["events"]) for s in summary["skipped_tables"]] == [
        ("shop.heap", "no primary-key columns", 1)
    ]
    assert summary["anomalies"] == 1  # notes: the second insert of code "a"

    def current(table):
        frame = spark.read.format("delta").load(join(table_root(lake / "snapshots", "shop", None, table), "current"))
        return frame.columns, sorted((r._cdc_key, r.asDict()) for r in frame.collect())

    columns, rows = current("orders")
    assert columns[0] == "id" and [(k, r["name"]) for k, r in rows] == [('["1"]', "a2")]
    columns, rows = current("items")
    assert columns[:2] == ["order_id", "line"] and [(k, r["qty"]) for k, r in rows] == [('["1","2"]', "7")]
    columns, rows = current("notes")
    assert columns[0] == "code" and [(k, r["id"]) for k, r in rows] == [('["a"]', "2")]
