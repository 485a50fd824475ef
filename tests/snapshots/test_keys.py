"""Keys where the format names none: `keys:` in the catalog (per topic) and `snapshot_days(keys=...)`;
a Debezium topic, whose messages carry no key names, then gives a snapshot with the reference's keys."""

import datetime as dt
import json

import pytest

from cdc_pipelines.catalog import CatalogError, load_catalog, snapshot_keys
from cdc_pipelines.demo import TABLES, canonical_events, write_extract
from cdc_pipelines.extracts.local import decode_paths
from cdc_pipelines.lake.io import write_partitions
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.store import table_root
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
        current = spark.read.format("delta").load(str(table_root(tmp_path / "lake" / "snapshots", db, None, table)
                                                      / "current"))  # fmt: skip
        assert {tuple(json.loads(r._cdc_key)) for r in current.collect()} == set(rows), (db, table)
