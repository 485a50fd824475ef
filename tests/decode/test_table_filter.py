import fnmatch
import json
import re

import pytest

from cdc_pipelines.cli.commands import main
from cdc_pipelines.extract.catalog import CatalogError, load_catalog
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.model.table_filter import TableFilter, TableFilterError
from tests.quality.rows import rules_of


def _parts(name: str) -> tuple[str | None, str]:
    db, _, table = name.rpartition(".")
    return db or None, table


NAMES = ["shop.orders", "shop.order_items", "shop.orders2", "crm.users", "crm.[x]", "a.b+c", "users", "shop.Orders"]
# and names with line terminators, where Java's and Python's regex defaults differ
ALL_NAMES = [*NAMES, "shop.new\nline", "users\n", "shop.orders\r"]
GLOBS = ["shop.*", "shop.orders", "shop.order?", "*.users", "crm.[[]x]", "a.b+c", "shop.[!o]*", "[cs]*.*s", "users"]


@pytest.mark.parametrize("glob", GLOBS)
def test_the_filter_matches_what_the_glob_matches(glob):
    """The filter's one form is its regex (Spark's `rlike` runs it, and `keeps` with Python's `re`): it
    matches exactly the names the shell glob matches (`fnmatch`, an independent reading of the glob)."""
    regex = TableFilter((glob,)).include_regex
    for name in ALL_NAMES:
        assert bool(re.match(regex, name)) == fnmatch.fnmatchcase(name, glob), (glob, name)
        assert TableFilter((glob,)).keeps(*_parts(name)) == fnmatch.fnmatchcase(name, glob), (glob, name)


def test_spark_runs_the_regex_as_python_does(spark):
    """`runner.filtered_out` runs the regex with Spark's `rlike` (Java's regex): it matches the same names."""
    from pyspark.sql import functions as F

    names = spark.createDataFrame([(n,) for n in ALL_NAMES], "name string")
    matched = names.select([F.col("name").rlike(TableFilter((g,)).include_regex) for g in GLOBS]).collect()
    assert [list(row) for row in matched] == [[fnmatch.fnmatchcase(n, g) for g in GLOBS] for n in ALL_NAMES]


def test_include_then_exclude():
    kept = TableFilter(("shop.*",), ("shop.order_*",))
    assert [n for n in NAMES if kept.keeps(*_parts(n))] == ["shop.orders", "shop.orders2", "shop.Orders"]
    assert TableFilter(exclude=("crm.*",)).keeps("crm", "users") is False
    assert TableFilter(("shop.*",)).keeps(None, None)  # an event of no table is kept


def test_no_patterns_is_no_filter():
    assert TableFilter.of(None, []) is None
    with pytest.raises(TableFilterError, match="non-empty globs"):
        TableFilter.of("shop.*")


def test_catalog_reads_table_filters(tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text("topics:\n  - {name: t, format: oms-canal, tables: {include: ['shop.*'], exclude: [shop.tmp_*]}}\n")
    assert load_catalog(path)[0].tables == TableFilter(("shop.*",), ("shop.tmp_*",))
    path.write_text("topics:\n  - {name: t, format: oms-canal, tables: {only: ['shop.*']}}\n")
    with pytest.raises(CatalogError, match="tables takes include and exclude"):
        load_catalog(path)


def _canal(table, n):
    return json.dumps({"data": [{"id": str(n)}], "database": "shop", "table": table, "type": "INSERT",
                       "es": 1704067200000 + n, "ts": 1704067200000 + n, "id": n, "isDdl": False,
                       "pkNames": ["id"], "mysqlType": {"id": "int"}, "sqlType": {"id": 4}, "old": None})  # fmt: skip


def test_decode_counts_what_the_filter_leaves_out(engine, tmp_path, capsys):
    """--include/--exclude through the CLI and the lake, on each engine: only the kept tables' events are
    written, the rest counted as filtered, and the conservation rule balances read = decoded + rejected +
    filtered."""
    path = tmp_path / "shop.jsonl"
    tables = ["orders", "order_items", "tmp_orders", "users", "orders"]
    path.write_text("\n".join(_canal(t, n) for n, t in enumerate(tables)) + "\nnot json\n")
    out = tmp_path / "lake"
    args = ["decode", "--format", "oms-canal", "--out", str(out), "--topic", "shop", "--dt", "2024-01-01"]
    filters = ["--include", "shop.order*", "--include", "shop.tmp_*", "--exclude", "*.tmp_*"]
    assert main([*args, *filters, "--engine", engine.name, str(path)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary == {"read": 6, "decoded": 3, "rejected": 1, "filtered": 2, "events": 3}
    changes = delta_rs.read_partition(str(out / "changes"), "dt", "2024-01-01", ("table_name",)).to_pylist()
    assert sorted(r["table_name"] for r in changes) == ["order_items", "orders", "orders"]
    conservation = rules_of(engine, out, "2024-01-01")["conservation_check"]
    assert conservation.checks["balance"] == {"checked": 2, "failed": 0} and conservation.info["filtered"] == 2
    assert [(g["read"], g["decoded"], g["rejected"], g["filtered"]) for g in conservation.groups] == [(6, 3, 1, 2)]
