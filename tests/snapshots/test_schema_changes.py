"""Schema changes from the topic's DDL and routed shards, applied by `snapshot_days` on each engine (one
body): three days of a topic with CREATE TABLE, a column renamed both ways (MySQL 8's RENAME COLUMN and
CHANGE), ADD, MODIFY, DROP COLUMN, RENAME TABLE, DROP TABLE and a DDL no parser reads; sixteen shards into
one table. Tables are stated as changelog lines, `+I[...]` for a current row, `[start, end) [...]` for a
history version."""

import datetime as dt

import pytest

from cdc_pipelines.runtime.storage import join
from cdc_pipelines.schema_changes.routes import Route
from cdc_pipelines.snapshots import apply
from cdc_pipelines.snapshots.store import ANOMALIES, table_root
from tests.conftest import _message_line
from tests.decode.oracles import decode_paths, encode_local
from tests.snapshots import delta_rs
from tests.snapshots.events import change

D1, D2, D3 = "2024-01-01", "2024-01-02", "2024-01-03"
TYPES = {
    "id": "INT",
    "amt": "DECIMAL",
    "amount": "DECIMAL",
    "note": "STRING",
    "memo": "STRING",
    "v": "STRING",
    "qty": "INT",
}


def _at(day: str, n: int) -> dict:
    return {"event_time": dt.datetime.fromisoformat(day) + dt.timedelta(seconds=n)}


def _row(op, n, day, table, before=None, after=None):
    event = change(n, op, before=before, after=after, table=table, day=day, seq=str(n)) | _at(day, n)
    return event | {"column_types": {c: TYPES.get(c, "STRING") for c in (after or before)}}


def _ddl(n: int, day: str, sql: str, table: str = "orders") -> dict:
    return change(n, "DDL", table=table, pk=None, day=day) | _at(day, n) | {"ddl": sql, "seq": str(n)}


def _o(i, amt, note=None, name="amt", memo="note"):
    return {"id": str(i), name: amt, **({memo: note} if note else {})}


TOPIC = [
    _ddl(1, D1, "CREATE TABLE orders (id INT PRIMARY KEY, amt DECIMAL(10,2), note VARCHAR(20))"),
    _row("INSERT", 2, D1, "orders", after=_o(1, "1.50", "a")),
    _row("INSERT", 3, D1, "orders", after=_o(2, "2.00", "b")),
    _ddl(4, D1, "CREATE TABLE later (id INT PRIMARY KEY, v VARCHAR(10))", table="later"),
    _ddl(5, D1, "CREATE TABLE quiet (id INT PRIMARY KEY, born DATE)", table="quiet"),
    _row("UPDATE", 1, D2, "orders", before=_o(1, "1.50", "a"), after=_o(1, "2.50", "a")),
    _ddl(2, D2, "ALTER TABLE orders RENAME COLUMN amt TO amount"),
    _row("UPDATE", 3, D2, "orders", before=_o(2, "2.00", "b", "amount"), after=_o(2, "3.00", "b", "amount")),
    _ddl(4, D2, "ALTER TABLE orders CHANGE note memo VARCHAR(30)"),
    _row(
        "UPDATE",
        5,
        D2,
        "orders",
        before=_o(1, "2.50", "a", "amount", "memo"),
        after=_o(1, "2.75", "z", "amount", "memo"),
    ),  # fmt: skip
    _ddl(6, D2, "ALTER TABLE orders ADD COLUMN qty INT, MODIFY amount DECIMAL(12,2)"),
    _ddl(7, D2, "ALTER TABLE orders DROP COLUMN memo"),
    _row("INSERT", 8, D2, "orders", after=_o(3, "4.00", name="amount") | {"qty": "7"}),
    _row("INSERT", 9, D2, "later", after={"id": "1", "v": "x"}),
    _row(
        "UPDATE",
        10,
        D2,
        "orders",
        before=_o(3, "4.00", name="amount") | {"qty": "7"},
        after=_o(3, "4.00", "late", "amount", "memo") | {"qty": "7"},
    ),  # disagrees with the DROP: kept, an anomaly
    _ddl(1, D3, "RENAME TABLE orders TO orders_v2"),
    _row("INSERT", 2, D3, "orders_v2", after=_o(4, "5.00", name="amount")),
    _row("DELETE", 3, D3, "orders_v2", before=_o(2, "3.00", name="amount")),
    _ddl(4, D3, "DROP TABLE later", table="later"),
    _ddl(5, D3, "ALTER TABLE orders_v2 PARTITION BY HASH(id) PARTITIONS 4", table="orders_v2"),
]


def _path(lake, table, kind="current", db="db"):
    if table.isupper():  # an Oracle-mode topic's
        db = db.upper()
    return join(table_root(lake / "snapshots", db, None, table), kind)


def _hms(value) -> str:
    return "-" if value is None else value.strftime("%d %H:%M:%S")


def _lines(lake, table) -> tuple[list[str], list[str]]:
    """A table's current rows (`+I[...]`) and history versions (`[start, end) [...]`), by key and start."""
    names = [c for c in delta_rs.types(_path(lake, table)) if not c.startswith("_cdc_")]
    cells = lambda r, names: ", ".join("null" if r.get(c) is None else str(r[c]) for c in names)  # noqa: E731
    key = lambda r: int(r[names[0]])  # noqa: E731
    current = [f"+I[{cells(r, names)}]" for r in sorted(delta_rs.rows(_path(lake, table)), key=key)]
    history = sorted(delta_rs.rows(_path(lake, table, "history")), key=lambda r: (key(r), r["_cdc_start_at"]))
    kept = [c for c in delta_rs.types(_path(lake, table, "history")) if not c.startswith("_cdc_")]
    versions = [f"[{_hms(r['_cdc_start_at'])}, {_hms(r['_cdc_end_at'])}) [{cells(r, kept)}]" for r in history]
    return current, versions


def _check_evolved(lake, name=str, integer="bigint") -> None:
    """The tables after the three days under `evolve`: values under the names the DDL left, at every version
    (`name`: how the topic's source writes a name; `integer`: the type its integer columns are declared as)."""
    assert delta_rs.types(_path(lake, name("orders_v2"))) == {
        name("id"): integer, name("amount"): "decimal(12,2)", name("qty"): integer, "_cdc_op": "string",
        "_cdc_event_time": "timestamp", "_cdc_event_id": "string", "_cdc_key": "string",
    }  # fmt: skip
    current, history = _lines(lake, name("orders_v2"))
    assert current == ["+I[1, 2.75, null]", "+I[3, 4.00, 7]", "+I[4, 5.00, null]"]
    assert history == [
        "[01 00:00:02, 02 00:00:01) [1, 1.50, a, null]",  # the history keeps the dropped column (renamed)
        "[02 00:00:01, 02 00:00:05) [1, 2.50, a, null]",
        "[02 00:00:05, -) [1, 2.75, z, null]",
        "[01 00:00:03, 02 00:00:03) [2, 2.00, b, null]",
        "[02 00:00:03, 03 00:00:03) [2, 3.00, b, null]",
        "[02 00:00:08, 02 00:00:10) [3, 4.00, null, 7]",
        "[02 00:00:10, -) [3, 4.00, late, 7]",  # a row disagreeing with the DROP: its value kept here
        "[03 00:00:02, -) [4, 5.00, null, null]",
    ]
    assert [c for c in delta_rs.types(_path(lake, name("orders_v2"), "history")) if c[:5] != "_cdc_"] == [
        name("id"), name("amount"), name("memo"), name("qty"),
    ]  # fmt: skip
    assert _lines(lake, name("orders")) == ([], [])  # carried to its new name
    assert _lines(lake, name("later")) == ([], ["[02 00:00:09, 03 00:00:04) [1, x]"])  # DROP TABLE: ended, emptied
    assert delta_rs.types(_path(lake, name("quiet")))[name("born")] in ("date", "timestamp_ntz")  # declared, empty
    anomalies = sorted((a["table_name"], a["kind"]) for a in delta_rs.rows(lake / "snapshots" / ANOMALIES))
    assert anomalies == [(name("orders"), "dropped_column_in_row"), (name("orders_v2"), "ddl_unread")]


def test_evolve_applies_every_change_at_its_place_and_a_backfill_replays_it(snapshot_engine, tmp_path):
    engine = snapshot_engine
    lake = engine.lake(tmp_path, TOPIC)
    days = {d: engine.days(lake, [d], schema_changes="evolve")[d] for d in (D1, D2, D3)}
    assert [days[d]["rows"] for d in (D1, D2, D3)] == [2, 4, 3]
    assert days[D3]["per_table"]["db.orders"]["rows"] == 0
    _check_evolved(lake)
    again = engine.days(lake, [D2], schema_changes="evolve")  # restored to day 1's end, days 2 and 3 applied again
    assert list(again) == [D2, D3]
    _check_evolved(lake)


@pytest.mark.spark
def test_evolve_on_spark_alone(spark, tmp_path):
    """Spark's own writes (column mapping renames and drops in the log) and its fold in `mapInArrow`."""
    from tests.snapshots.lakes import SnapshotEngine

    engine = SnapshotEngine("spark", spark)
    lake = engine.lake(tmp_path, TOPIC)
    spark.conf.set(apply.MAX_EVENTS_SETTING, "0")
    try:
        with engine.spark_writes_every_table():
            for day in (D1, D2, D3):
                engine.days(lake, [day], schema_changes="evolve")
    finally:
        spark.conf.unset(apply.MAX_EVENTS_SETTING)
    _check_evolved(lake)


def test_lenient_keeps_todays_tables(snapshot_engine, tmp_path):
    """The same topic under `lenient`: columns follow the rows, the DDL is kept in `_ddl` only."""
    lake = snapshot_engine.lake(tmp_path, TOPIC)
    snapshot_engine.days(lake, [D1, D2, D3])
    rows = [{k: v for k, v in r.items() if k[:5] != "_cdc_"} for r in delta_rs.rows(_path(lake, "orders"))]
    assert sorted(rows, key=lambda r: r["id"]) == [
        {"id": 1, "amt": None, "note": None, "amount": 2.75, "memo": "z", "qty": None},
        {"id": 2, "amt": None, "note": "b", "amount": 3, "memo": None, "qty": None},
        {"id": 3, "amt": None, "note": None, "amount": 4, "memo": "late", "qty": 7},
    ]
    assert _lines(lake, "later")[0] == ["+I[1, x]"]
    assert _lines(lake, "orders_v2")[0] == ["+I[4, 5.00]"]


SHARDS = [f"orders_{i:02d}" for i in range(16)]


def _shard_topic() -> list[dict]:
    events = [_row("INSERT", i + 1, D1, shard, after={"id": str(i), "v": shard}) for i, shard in enumerate(SHARDS)]
    events.append(_row("INSERT", 20, D1, "orders_03", after={"id": "100", "v": "three"}))
    events.append(_row("INSERT", 21, D1, "orders_07", after={"id": "100", "v": "seven"}))  # the same key: a collision
    events.append(_row("UPDATE", 1, D2, "orders_05", before={"id": "5", "v": "x"}, after={"id": "5", "v": "five"}))
    events.append(_row("DELETE", 2, D2, "orders_06", before={"id": "6", "v": "x"}))
    # keys another shard set on day 1: collisions with the live rows
    events.append(_row("INSERT", 3, D2, "orders_09", after={"id": "3", "v": "x9"}))
    events.append(_row("UPDATE", 4, D2, "orders_10", before={"id": "4", "v": "y"}, after={"id": "4", "v": "x10"}))
    return events


@pytest.mark.parametrize("key", [(), ("_cdc_source_table", "id")])
def test_sixteen_shards_route_into_one_table(snapshot_engine, tmp_path, key):
    lake = snapshot_engine.lake(tmp_path, _shard_topic())
    routes = [Route(r"db\.orders_[0-9]+", "db.orders", key)]
    days = snapshot_engine.days(lake, [D1, D2], routes=routes)
    assert set(days[D2]["per_table"]) == {"db.orders"}
    rows = sorted((r["id"], r["v"], r["_cdc_source_table"]) for r in delta_rs.rows(_path(lake, "orders")))
    own = {i: (i, "five" if i == 5 else shard, f"db.{shard}") for i, shard in enumerate(SHARDS) if i != 6}
    moved = [(3, "x9", "db.orders_09"), (4, "x10", "db.orders_10")]
    kinds = sorted((a["kind"], a["event_id"]) for a in delta_rs.rows(lake / "snapshots" / ANOMALIES))
    if key:  # the shard is part of the key: every shard's rows kept
        assert rows == sorted([*own.values(), *moved, (100, "seven", "db.orders_07"), (100, "three", "db.orders_03")])
        assert kinds == [("update_of_missing_key", f"e{D2}-4")]
    else:
        assert rows == sorted([*(r for i, r in own.items() if i not in (3, 4)), *moved, (100, "seven", "db.orders_07")])
        assert kinds == [
            ("insert_of_existing_key", f"e{D1}-21"), ("insert_of_existing_key", f"e{D2}-3"),
            ("shard_key_collision", f"e{D1}-21"), ("shard_key_collision", f"e{D2}-3"),
            ("shard_key_collision", f"e{D2}-4"),
        ]  # fmt: skip


def test_a_delete_moves_nothing_between_shards(snapshot_engine, tmp_path):
    """Each routed event keeps its shard: a DELETE of one shard's key leaves another shard's same id."""
    events = [_row("INSERT", 1, D1, "orders_01", after={"id": "1", "v": "a"}),
              _row("INSERT", 2, D1, "orders_02", after={"id": "1", "v": "b"}),
              _row("DELETE", 3, D1, "orders_01", before={"id": "1", "v": "a"})]  # fmt: skip
    lake = snapshot_engine.lake(tmp_path, events)
    snapshot_engine.days(lake, [D1], routes=[Route(r"db\.orders_[0-9]+", "db.orders", ("_cdc_source_table", "id"))])
    assert [(r["id"], r["_cdc_source_table"]) for r in delta_rs.rows(_path(lake, "orders"))] == [(1, "db.orders_02")]


# the topic's DDL as OceanBase's Oracle mode writes it (no CHANGE: a second RENAME COLUMN), names upper case
ORACLE_DDL = {
    "CREATE TABLE orders": "CREATE TABLE orders (id NUMBER(10) PRIMARY KEY, amt NUMBER(10,2), note VARCHAR2(20))",
    "CREATE TABLE later": "CREATE TABLE later (id NUMBER(10) PRIMARY KEY, v VARCHAR2(10))",
    "CREATE TABLE quiet": "CREATE TABLE quiet (id NUMBER(10) PRIMARY KEY, born DATE)",
    "ALTER TABLE orders RENAME": "ALTER TABLE orders RENAME COLUMN amt TO amount",
    "ALTER TABLE orders CHANGE": "ALTER TABLE orders RENAME COLUMN note TO memo",
    "ALTER TABLE orders ADD": "ALTER TABLE orders ADD (qty NUMBER(10)); ALTER TABLE orders MODIFY (amount "
    "NUMBER(12,2))",
    "ALTER TABLE orders DROP": "ALTER TABLE orders DROP COLUMN memo",
    "RENAME TABLE": "ALTER TABLE orders RENAME TO orders_v2",
    "DROP TABLE": "DROP TABLE later PURGE",
    "ALTER TABLE orders_v2": "ALTER TABLE orders_v2 PARTITION BY HASH(id) PARTITIONS 4",
}


def _oracle(event: dict) -> dict:
    upper = lambda image: image and {k.upper(): v for k, v in image.items()}  # noqa: E731
    ddl = event["ddl"] and next(v for k, v in ORACLE_DDL.items() if event["ddl"].startswith(k))
    return event | {"db": "DB", "table_name": event["table_name"].upper(), "ddl": ddl, "meta": {"dbType": "OB_ORACLE"},
                    "pk_columns": event["pk_columns"] and ["ID"], **{c: upper(event[c]) for c in
                                                                     ("before", "after", "column_types")}}  # fmt: skip


def _through(format_id: str, events: list[dict], folder) -> list[dict]:
    """The events encoded into `format_id` and decoded again, a day's file each."""
    out = []
    for day in sorted({e["dt"] for e in events}):
        messages, _ = encode_local([e for e in events if e["dt"] == day], format_id)
        path = folder / f"{format_id}-{day}.jsonl"
        path.write_text("".join(_message_line(m) + "\n" for _, _, m in messages))
        out += decode_paths(format_id, [path], topic="orders", dt=day).events
    return out


@pytest.mark.parametrize(
    "format_id, oracle", [("oms-canal", False), ("oms-default", False), ("dts-avro", False), ("oms-default", True)]
)
def test_the_topic_through_its_formats_ddl_records(tmp_path, format_id, oracle):
    """The same three days as canal, OMS Default and DTS Avro messages carry them (their DDL records), and as
    an Oracle-mode OMS topic: the tables the reader expects, on the local engine (the engines' parity is the
    tests above). OMS Default names no value's type: the declared ones type its rows."""
    from tests.snapshots.lakes import SnapshotEngine

    engine = SnapshotEngine("local", None)
    events = _through(format_id, [_oracle(e) for e in TOPIC] if oracle else TOPIC, tmp_path)
    lake = engine.lake(tmp_path, events)
    for day in (D1, D2, D3):
        engine.days(lake, [day], schema_changes="evolve")
    _check_evolved(lake, *((str.upper, "decimal(10,0)") if oracle else (str, "bigint")))  # NUMBER(10): a decimal


def test_ignore_keeps_each_tables_columns_as_first_seen(snapshot_engine, tmp_path):
    """Under `ignore` a table keeps the columns it had at first sight (its CREATE TABLE's here); a row's
    other columns are left out, one `ignored_column` anomaly each; no DDL changes a table, and a table
    first seen today takes its rows' columns."""
    lake = snapshot_engine.lake(tmp_path, TOPIC)
    for day in (D1, D2, D3):
        snapshot_engine.days(lake, [day], schema_changes="ignore")
    assert _lines(lake, "orders")[0] == ["+I[1, null, null]", "+I[2, null, b]", "+I[3, null, null]"]
    assert _lines(lake, "orders_v2")[0] == ["+I[4, 5.00]"]
    assert _lines(lake, "later")[0] == ["+I[1, x]"]
    anomalies = sorted((a["kind"], a["event_id"], a["detail"].split(";")[0]) for a in
                       delta_rs.rows(lake / "snapshots" / ANOMALIES) if a["kind"] == "ignored_column")  # fmt: skip
    assert anomalies == [
        ("ignored_column", f"e{D2}-3", "amount: 4 row(s) carry it"),
        ("ignored_column", f"e{D2}-5", "memo: 2 row(s) carry it"),
        ("ignored_column", f"e{D2}-8", "qty: 2 row(s) carry it"),
    ]


def test_a_table_dropped_and_created_again_starts_anew(snapshot_engine, tmp_path):
    """DROP TABLE ends the open versions and empties the table; the CREATE after it brings its declared
    columns (the old ones stay, null from then on)."""
    events = [_row("INSERT", 1, D1, "later", after={"id": "1", "v": "x"}),
              _ddl(1, D2, "DROP TABLE later", table="later"),
              _ddl(2, D2, "CREATE TABLE later (id INT PRIMARY KEY, w DATE)", table="later"),
              _row("INSERT", 3, D2, "later", after={"id": "2"})]  # fmt: skip
    lake = snapshot_engine.lake(tmp_path, events)
    for day in (D1, D2):
        snapshot_engine.days(lake, [day], schema_changes="evolve")
    assert _lines(lake, "later") == (["+I[2, null, null]"], ["[01 00:00:01, 02 00:00:01) [1, x, null]",
                                                             "[02 00:00:03, -) [2, null, null]"])  # fmt: skip
    assert delta_rs.types(_path(lake, "later"))["w"] == "date"


def test_exception_fails_the_first_day_with_a_schema_change_and_applies_nothing(tmp_path):
    from cdc_pipelines.schema_changes.policy import SchemaChangeRefused
    from cdc_pipelines.snapshots.store import read_summary
    from tests.snapshots.lakes import SnapshotEngine

    engine = SnapshotEngine("local", None)
    lake = engine.lake(tmp_path, TOPIC)
    with pytest.raises(SchemaChangeRefused, match=f"event e{D1}-1"):
        engine.days(lake, [D1], schema_changes="exception")
    assert read_summary(lake / "snapshots", D1) is None and not (lake / "snapshots" / "db=db").exists()


@pytest.mark.spark
def test_a_table_created_with_a_name_that_needs_column_mapping_is_sparks(spark, tmp_path):
    """On the Spark engine a CREATE TABLE with a column name that needs column mapping leaves the table to
    Spark, as a day's rows would (`small_tables.owns`): delta-rs writes none, so its rows go in."""
    from tests.snapshots.lakes import SnapshotEngine

    engine = SnapshotEngine("spark", spark)
    topic = [_ddl(1, D1, "CREATE TABLE w (id INT PRIMARY KEY, `a b` VARCHAR(10))", table="w"),
             _row("INSERT", 2, D1, "w", after={"id": "1", "a b": "x"})]  # fmt: skip
    lake = engine.lake(tmp_path, topic)
    engine.days(lake, [D1], schema_changes="evolve")
    current = spark.read.format("delta").load(_path(lake, "w"))
    assert [tuple(r) for r in current.select("id", "a b").collect()] == [(1, "x")]
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{_path(lake, 'w')}`").first()
    assert detail["properties"]["delta.columnMapping.mode"] == "name"  # Spark's table
