"""A catalog topic's `schema_changes:`, `ddl_dialect:` and `routes:` (read in `extract.catalog`)."""

from __future__ import annotations

import pytest

from cdc_pipelines.extract.catalog import CatalogError, load_catalog
from cdc_pipelines.schema_changes.routes import Route


def _topic(tmp_path, extra: str):
    path = tmp_path / "catalog.yaml"
    path.write_text(f"topics:\n  - {{name: t, format: oms-default{extra}}}\n")
    return load_catalog(path)[0]


def test_defaults(tmp_path):
    topic = _topic(tmp_path, "")
    assert (topic.schema_changes, topic.ddl_dialect, topic.routes) == ("lenient", None, ())


def test_keys_read(tmp_path):
    topic = _topic(
        tmp_path,
        r", schema_changes: evolve, ddl_dialect: OB_ORACLE, routes: [{source_table: 'shop\.orders_[0-9]+', "
        "sink_table: shop.orders, key: [_cdc_source_table, id]}]",
    )
    assert (topic.schema_changes, topic.ddl_dialect) == ("evolve", "oracle")
    assert topic.routes == (Route(r"shop\.orders_[0-9]+", "shop.orders", ("_cdc_source_table", "id")),)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (", schema_changes: merge", "schema_changes must be one of lenient, evolve, ignore, exception, not 'merge'"),
        (", ddl_dialect: sqlserver", "ddl_dialect 'sqlserver' is not MySQL, Oracle or PostgreSQL"),
        (", ddl_dialect: 3", "ddl_dialect 3 is not MySQL"),
        (", routes: {source_table: a, sink_table: b.c}", "topic 't' in .*: routes must be a list"),
        (", routes: [{source_table: '[', sink_table: b.c}]", "is not a regular expression"),
        (", routes: [{source_table: a, sink_table: b}]", "sink_table 'b' is not db.table"),
    ],
)
def test_bad_values(tmp_path, extra, message):
    with pytest.raises(CatalogError, match=message):
        _topic(tmp_path, extra)
