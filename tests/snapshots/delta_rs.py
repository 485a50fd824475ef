"""A snapshot table read by delta-rs (no JVM) against Spark's read of it, row for row and column for column.

delta-rs reads deletion vectors and column mapping through its DataFusion engine (`QueryBuilder`);
`DeltaTable.to_pyarrow_table` goes through pyarrow datasets, which refuse both.
"""

from __future__ import annotations

import datetime as dt
import json
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

from cdc_pipelines.snapshots.small_tables import MAX_ROWS_SETTING, SPARK_TYPE_NAMES


def read(path: str | Path, version: int | None = None) -> pa.Table:
    table = DeltaTable(str(path), version=version)
    return pa.table(QueryBuilder().register("t", table).execute("SELECT * FROM t").read_all())


def rows(path: str | Path, version: int | None = None) -> list[dict]:
    """The table's rows as plain dicts (times naive UTC, as Spark hands them out)."""
    return [{k: _plain(v) for k, v in r.items()} for r in read(path, version).to_pylist()]


def types(path: str | Path) -> dict[str, str]:
    """The table's columns, in order, with their types as Spark names them."""
    return dict(table_state(path)[0])


def commit(path: str | Path, version: int) -> tuple[str, int]:
    """One commit of a Delta table, from its log: its operation and the files it added."""
    log = Path(path, "_delta_log", f"{version:020d}.json").read_text().splitlines()
    info = next(json.loads(line)["commitInfo"] for line in log if "commitInfo" in line)
    return info["operation"], sum(1 for line in log if '"add"' in line and "add" in json.loads(line))


def _plain(value):
    """Spark hands out timestamps as naive UTC (the session's zone); delta-rs as aware UTC."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: json.dumps(r, default=repr, sort_keys=True))


def spark_rows(spark, path: str | Path) -> tuple[dict[str, str], list]:
    """Spark's read of the table (its column types, its rows), asserted equal to delta-rs's: the same
    columns, in order, and the same rows."""
    frame = spark.read.format("delta").load(str(path))
    theirs = read(path)
    assert theirs.column_names == frame.columns, path
    rows = frame.collect()
    ours = _sorted([r.asDict() for r in rows])
    assert _sorted([{k: _plain(v) for k, v in r.items()} for r in theirs.to_pylist()]) == ours, path
    return dict(frame.dtypes), rows


def assert_same_as_spark(spark, path: str | Path) -> int:
    """delta-rs and Spark read the same columns, in order, and the same rows; the number of rows."""
    return len(spark_rows(spark, path)[1])


def table_state(path: str | Path) -> tuple[list[tuple[str, str]], list[str]]:
    """A table's columns with their types as Spark names them, and its rows as sorted JSON texts, read by
    delta-rs: what tests compare between two runs' tables (that Spark reads the same is
    `assert_same_as_spark`'s, once per table where it matters: a Spark read of each is seconds a table)."""
    table = DeltaTable(str(path))
    types = [(f.name, SPARK_TYPE_NAMES.get(f.type.type, f.type.type)) for f in table.schema().fields]
    rows = read(path).to_pylist()
    return types, sorted(json.dumps({k: _plain(v) for k, v in r.items()}, default=str, sort_keys=True) for r in rows)


def has_deletion_vectors(path: str | Path) -> bool:
    """Whether a commit of the table added a file with a deletion vector (rows a MERGE marked, not rewritten)."""
    for commit in sorted(Path(path, "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            add = json.loads(line).get("add")
            if add and add.get("deletionVector"):
                return True
    return False


@contextmanager
def small_table_max_rows(spark, rows: int):
    """Snapshots with delta-rs writing tables of at most `rows` rows (0: Spark writes every table)."""
    spark.conf.set(MAX_ROWS_SETTING, str(rows))
    try:
        yield
    finally:
        spark.conf.unset(MAX_ROWS_SETTING)
