"""Tables written by delta-rs (`small_tables`: the local engine's, and Spark's small tables of a local lake)
hold what Spark's MERGEs would: the same days applied by the local engine, by Spark with delta-rs writing
its small tables, and by Spark alone give the same tables, types, versions and summaries (columns widened
to text by delta-rs too); a table keeps its writer and its features when it outgrows the limit that
decided who created it."""

import json
from decimal import Decimal
from random import Random
from types import SimpleNamespace

import pyarrow as pa
from deltalake import DeltaTable
from pyspark.sql import functions as F

from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots import local_days, small_tables, snapshot_days
from cdc_pipelines.snapshots.store import table_paths, table_root
from cdc_pipelines.snapshots.values import as_text
from tests.lake.partitions import write_partitions
from tests.snapshots import delta_rs
from tests.snapshots.events import changes_df, delete, insert, truncate, update
from tests.snapshots.test_values import spark_text

D1, D2, D3 = "2024-01-01", "2024-01-02", "2024-01-03"
TABLES = ("t", "u", "v")
KINDS = ("current", "history")


def _row(i, name, amount="1.50", flag="true"):
    return {"id": str(i), "name": name, "amount": amount, "flag": flag}


EVENTS = [
    insert(1, _row(1, "a")), insert(2, _row(2, "b")), insert(3, _row(3, "c")),
    insert(4, {"id": "1", "extra": "5"}, table="u"),
    update(1, _row(1, "a"), _row(1, "a2") | {"extra": "7"}, day=D2),  # a column added
    delete(2, _row(2, "b"), day=D2),
    update(3, _row(3, "c"), _row(4, "c"), day=D2),  # the key changes: 3 removed, 4 set
    insert(4, _row(5, "e", flag="maybe"), day=D2),  # not a BOOLEAN: the column becomes text
    insert(5, {"id": "2", "extra": "1" * 25}, table="u", day=D2),  # beyond a long: decimal(38,0)
    insert(6, {"id": "1", "name": "new"}, table="v", day=D2),  # a table new on day 2
    truncate(1, table="u", day=D3),
    insert(2, {"id": "3", "extra": "9" * 40}, table="u", day=D3),  # beyond decimal(38): text
    update(3, _row(4, "c"), _row(4, "c3", amount="2.125"), day=D3),
    update(4, {"id": "1", "name": "new"}, {"id": "1", "name": "new", "note": "n"}, table="v", day=D3),  # added
]  # fmt: skip


def _path(lake, table, kind):
    return join(table_root(lake / "snapshots", "db", None, table), kind)


def _state(lake):
    """Every table's columns with their types, and its rows, both tables."""
    return {(table, kind): delta_rs.table_state(_path(lake, table, kind)) for table in TABLES for kind in KINDS}


def _deletion_vectors(path):
    """Whether the table's MERGEs mark rows (Spark's tables) or rewrite their files (delta-rs's)."""
    return DeltaTable(path).metadata().configuration.get("delta.enableDeletionVectors") == "true"


def _engines(path):
    """The engines that committed the table's versions (delta-rs widens its tables' columns itself)."""
    return {entry["engineInfo"].split(":")[0].split("/")[0] for entry in DeltaTable(path).history()}


def _summaries(days, lake):
    """The days' summaries with the lake's own folder left out of their paths."""
    return json.loads(json.dumps(days).replace(str(lake), "LAKE"))


def test_delta_rs_tables_equal_sparks_and_keep_their_features(spark, tmp_path):
    lakes = {name: tmp_path / name for name in ("spark", "delta_rs", "local")}
    for lake in lakes.values():
        write_partitions(changes_df(spark, EVENTS), lake / "changes")
    with delta_rs.small_table_max_rows(spark, 0):
        by_spark = snapshot_days(spark, lakes["spark"], [D1, D2, D3])
    by_delta_rs = snapshot_days(spark, lakes["delta_rs"], [D1, D2, D3])
    by_local = snapshot_days(None, lakes["local"], [D1, D2, D3])
    state = _state(lakes["spark"])
    assert _state(lakes["delta_rs"]) == state and _state(lakes["local"]) == state
    assert _summaries(by_delta_rs, lakes["delta_rs"]) == _summaries(by_spark, lakes["spark"])
    assert _summaries(by_local, lakes["local"]) == _summaries(by_spark, lakes["spark"])
    assert [by_spark[d]["anomalies"] for d in (D1, D2, D3)] == [0, 1, 0]
    assert dict(state["u", "current"][0])["extra"] == "string" and dict(state["t", "current"][0])["flag"] == "string"
    for table in TABLES:
        for kind in ("current", "history"):
            assert _deletion_vectors(_path(lakes["spark"], table, kind))
            assert not _deletion_vectors(_path(lakes["delta_rs"], table, kind))
            assert _engines(_path(lakes["delta_rs"], table, kind)) == {"delta-rs"}
            delta_rs.assert_same_as_spark(spark, _path(lakes["delta_rs"], table, kind))
    # a backfill of day 1 restores every table to its empty version 0: delta-rs's still, not Spark's
    assert list(snapshot_days(spark, lakes["delta_rs"], [D1])) == [D1, D2, D3]
    assert _state(lakes["delta_rs"]) == state
    assert not any(_deletion_vectors(_path(lakes["delta_rs"], table, "current")) for table in TABLES)
    # a backfill of day 3 with a limit the tables have outgrown: delta-rs writes them still, and Spark a
    # table it created: no table changes hands by growing
    with delta_rs.small_table_max_rows(spark, 1):
        again = snapshot_days(spark, lakes["delta_rs"], [D3])
        by_spark_again = snapshot_days(spark, lakes["spark"], [D3])
    assert _state(lakes["delta_rs"]) == state and _state(lakes["spark"]) == state
    assert again[D3]["rows"] == by_spark[D3]["rows"] == by_spark_again[D3]["rows"]
    assert not any(_deletion_vectors(_path(lakes["delta_rs"], table, kind)) for table in TABLES for kind in KINDS)
    assert all(_engines(_path(lakes["delta_rs"], table, kind)) == {"delta-rs"} for table in TABLES for kind in KINDS)
    assert all(_engines(_path(lakes["spark"], table, kind)) == {"Apache-Spark"} for table in TABLES for kind in KINDS)
    # a day of more rows than the driver holds (the local engine's bound on a day): Spark's MERGEs write
    # delta-rs's tables as they are, no deletion vectors added
    spark.conf.set(local_days.MAX_EVENTS_SETTING, "1")
    try:
        snapshot_days(spark, lakes["delta_rs"], [D3])
    finally:
        spark.conf.unset(local_days.MAX_EVENTS_SETTING)
    assert _state(lakes["delta_rs"]) == state
    assert not any(_deletion_vectors(_path(lakes["delta_rs"], table, kind)) for table in TABLES for kind in KINDS)
    assert all("Apache-Spark" in _engines(_path(lakes["delta_rs"], table, "current")) for table in TABLES)
    # and the local engine writes them as the Spark engine did: a rerun of day 3
    snapshot_days(None, lakes["delta_rs"], [D3])
    assert _state(lakes["delta_rs"]) == state
    for table in TABLES:  # and Spark reads what both engines left as delta-rs does
        for kind in KINDS:
            delta_rs.assert_same_as_spark(spark, _path(lakes["delta_rs"], table, kind))


def test_columns_become_text_as_spark_prints_them(spark):
    """`as_text` against Spark's `typed.as_text` on each type delta-rs widens to text. Spark is given dates
    and local times as their days and microseconds and builds its own, from year 0 to 9999."""
    random = Random(5)
    days = [random.randint(-719_528, 2_932_896) for _ in range(60)] + [-719_528, -719_163, -1, 0, 2_932_896]
    micros = [random.randint(-62_167_219_200_000_000, 253_402_300_799_999_999) for _ in range(60)]
    micros += [-1, 0, 1, 100_000, 253_402_300_799_999_999, *(random.randint(0, 10**9) * 10**6 for _ in range(5))]
    longs = [0, -1, 2**63 - 1, -(2**63), None, *(random.randint(-(10**15), 10**15) for _ in range(30))]
    blobs = [b"", b"\x00\xff", None, *(random.randbytes(random.randint(1, 40)) for _ in range(30))]
    columns = {
        "boolean": pa.array([True, False, None]),
        "bigint": pa.array(longs),
        "binary": pa.array(blobs),
        "date": pa.array(days, pa.int32()).cast(pa.date32()),
        "timestamp_ntz": pa.array(micros, pa.int64()).cast(pa.timestamp("us")),
    }
    for precision, scale in ((1, 0), (3, 2), (11, 10), (20, 10), (38, 0), (38, 18), (38, 37)):
        digits = [random.randint(1, precision) for _ in range(40)]
        values = [Decimal(f"{random.randint(1 - 10**d, 10**d - 1)}e-{scale}") for d in digits]
        values += [Decimal(f"0e-{scale}"), Decimal(f"1e-{scale}"), None]
        columns[f"decimal({precision},{scale})"] = pa.array(values, pa.decimal128(precision, scale))
    rows = max(len(c) for c in columns.values())
    names = {type_name: f"c{i}" for i, type_name in enumerate(columns)}
    padded = {t: pa.concat_arrays([c, pa.nulls(rows - len(c), c.type)]) for t, c in columns.items()}
    numbers = {"date": pa.int32(), "timestamp_ntz": pa.int64()}
    built = {
        "date": F.date_from_unix_date,
        "timestamp_ntz": lambda c: F.timestamp_micros(c).cast("timestamp_ntz"),
    }
    given = {names[t]: c.cast(numbers[t]) if t in numbers else c for t, c in padded.items()}
    frame = spark.createDataFrame(pa.table({**given, "i": pa.array(range(rows))})).orderBy("i")
    typed = {t: built.get(t, lambda c: c)(F.col(names[t])) for t in columns}
    by_spark = frame.select(*[spark_text(typed[t], t).alias(names[t]) for t in columns]).toArrow()
    for type_name, column in padded.items():
        ours = as_text(pa.chunked_array([column]), type_name)
        assert ours.to_pylist() == by_spark[names[type_name]].to_pylist(), type_name


def test_a_new_table_whose_column_names_need_mapping_is_sparks(tmp_path):
    """On the Spark engine delta-rs creates a new table of at most `max_rows` rows and plain column names,
    whether a day's rows or a CREATE TABLE makes it (`small_tables.owns`, one rule for both); a name that
    needs column mapping leaves it to Spark, which creates it with column mapping."""
    spark = SimpleNamespace(conf={})  # the session's settings: the default limit
    paths = table_paths(tmp_path / "snapshots", ("db", None, "t"))
    assert small_tables.owns(paths, spark, 1, ["id", "name"])
    assert not small_tables.owns(paths, spark, 1, ["id", "a b"])
    assert not small_tables.owns(paths, spark, small_tables.DEFAULT_MAX_ROWS + 1, ["id", "name"])
