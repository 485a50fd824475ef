"""The schema evolution rule: one day of DDL under each policy, as data (`plan_day`), and `widen`."""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.schema_changes.ddl import parse_ddl
from cdc_pipelines.schema_changes.policy import (
    EVOLVE,
    EXCEPTION,
    IGNORE,
    LENIENT,
    POLICIES,
    DdlEvent,
    SchemaChangeRefused,
    plan_day,
)

START = {"shop.orders": {"id": "bigint", "amt": "decimal(10,2)", "note": "string"}}
DAY = [
    "ALTER TABLE orders ADD COLUMN ts DATETIME(6)",  # e1
    "ALTER TABLE orders RENAME COLUMN note TO remark",  # e2
    "ALTER TABLE orders CHANGE amt amount DECIMAL(12,2)",  # e3
    "ALTER TABLE orders MODIFY amount DECIMAL(8,2)",  # e4: narrower than the column
    "ALTER TABLE orders DROP COLUMN ts",  # e5
    "CREATE TABLE shop.items (id INT PRIMARY KEY, sku VARCHAR(10))",  # e6
    "RENAME TABLE shop.items TO shop.products",  # e7
    "DROP TABLE shop.orders",  # e8
    "ALTER TABLE orders ADD PARTITION (PARTITION p VALUES LESS THAN (1))",  # e9: not read
    "TRUNCATE TABLE shop.products",  # e10
    "CREATE INDEX i ON shop.products (sku)",  # e11: no schema change
]


def _events(ddls: list[str], dialect: str = "mysql", db: str = "shop") -> list[DdlEvent]:
    return [DdlEvent(f"e{i}", d, tuple(parse_ddl(d, dialect)), db, "orders") for i, d in enumerate(ddls, 1)]


def _summary(plan) -> dict:
    return {
        "tables": {
            name: ", ".join(f"{c} {t}" for c, t in table.columns.items()) for name, table in plan.tables.items()
        },
        "applied": " ".join(step.event_id for step in plan.steps if step.applied),
        "created": list(plan.created),
        "renamed": [f"{a} -> {b}" for a, b in plan.renamed_tables],
        "dropped": list(plan.dropped_tables),
        "truncated": list(plan.truncated),
        "anomalies": [f"{a.kind} {a.event_id}" for a in plan.anomalies],
    }


EXPECTED = {
    LENIENT: {
        # the new names beside the old ones, nothing dropped, no table renamed or dropped
        "tables": {
            "shop.orders": "id bigint, amt decimal(10,2), note string, ts timestamp_ntz, remark string, "
            "amount decimal(12,2)",
            "shop.items": "id bigint, sku string",
        },
        "applied": "e1 e2 e3 e4 e6",
        "created": ["shop.items"],
        "renamed": [],
        "dropped": [],
        "truncated": ["shop.products"],
        "anomalies": ["narrowing e4", "ddl_unread e9"],
    },
    EVOLVE: {
        "tables": {"shop.products": "id bigint, sku string"},
        "applied": "e1 e2 e3 e4 e5 e6 e7 e8",
        "created": ["shop.items"],
        "renamed": ["shop.items -> shop.products"],
        "dropped": ["shop.orders"],
        "truncated": ["shop.products"],
        "anomalies": ["narrowing e4", "ddl_unread e9"],
    },
    IGNORE: {
        "tables": {"shop.items": "id bigint, sku string"},  # a table not seen before takes its CREATE
        "applied": "e6",
        "created": ["shop.items"],
        "renamed": [],
        "dropped": [],
        "truncated": ["shop.products"],
        "anomalies": ["ddl_unread e9"],
    },
}


@pytest.mark.parametrize("policy", [LENIENT, EVOLVE, IGNORE])
def test_a_day_under_each_policy(policy):
    assert _summary(plan_day(START, _events(DAY), policy)) == EXPECTED[policy]


def test_evolve_keeps_values_under_the_new_name_and_widens():
    (orders,) = plan_day(START, _events(DAY[:5]), EVOLVE).tables.values()
    assert dict(orders.columns) == {"id": "bigint", "amount": "decimal(12,2)", "remark": "string"}
    assert orders.renamed == (("note", "remark"), ("amt", "amount"))
    assert orders.dropped == ("ts",)
    assert dict(orders.widened) == {"amount": ("decimal(10,2)", "decimal(12,2)")}  # amt's values, widened
    assert dict(orders.added) == {}  # ts was added and dropped the same day


def test_a_narrowing_is_an_anomaly_and_the_column_keeps_its_type():
    plan = plan_day({"t.a": {"c": "string"}}, _events(["ALTER TABLE t.a MODIFY c BIGINT"]), EVOLVE)
    assert plan.tables["t.a"].columns == {"c": "string"}
    (anomaly,) = plan.anomalies
    assert (anomaly.kind, anomaly.event_id, anomaly.detail) == (
        "narrowing",
        "e1",
        "c is string, declared bigint: kept as string",
    )


def test_drop_table_then_create_starts_anew():
    ddls = ["DROP TABLE shop.orders", "CREATE TABLE shop.orders (id BIGINT, v VARCHAR(5))"]
    plan = plan_day(START, _events(ddls), EVOLVE)
    assert plan.dropped_tables == ("shop.orders",) and plan.created == ("shop.orders",)
    assert plan.tables["shop.orders"].columns == {"id": "bigint", "v": "string"}


def test_changes_to_columns_a_table_does_not_have_are_anomalies():
    ddls = ["ALTER TABLE orders DROP COLUMN nope", "ALTER TABLE orders RENAME COLUMN nope TO x",
            "ALTER TABLE orders RENAME COLUMN amt TO note", "CREATE TABLE shop.orders (id BIGINT)"]  # fmt: skip
    plan = plan_day(START, _events(ddls), EVOLVE)
    assert [(a.kind, a.event_id) for a in plan.anomalies] == [
        ("unknown_column", "e1"), ("unknown_column", "e2"), ("column_exists", "e3"), ("table_exists", "e4"),
    ]  # fmt: skip
    assert plan.tables["shop.orders"].columns == START["shop.orders"]


def test_exception_refuses_the_day_naming_table_ddl_and_event():
    with pytest.raises(SchemaChangeRefused) as refused:
        plan_day(START, _events(["CREATE INDEX i ON orders (id)", "TRUNCATE TABLE orders", DAY[1]]), EXCEPTION)
    assert (refused.value.table, refused.value.event_id, refused.value.ddl) == ("shop.orders", "e3", DAY[1])
    assert "table shop.orders: schema change in event e3" in str(refused.value)
    with pytest.raises(SchemaChangeRefused, match="e1"):  # a DDL not read may have changed the table
        plan_day(START, _events([DAY[8]]), EXCEPTION)
    assert plan_day(START, _events([DAY[10]]), EXCEPTION).steps == ()


def test_oracle_names_and_the_events_db():
    plan = plan_day(
        {"HR.EMP": {"ID": "decimal(10,0)"}}, _events(["ALTER TABLE emp ADD (c1 NUMBER(5))"], "oracle", "HR")
    )
    assert plan.tables["HR.EMP"].columns == {"ID": "decimal(10,0)", "C1": "decimal(5,0)"}


def test_an_unknown_policy():
    with pytest.raises(ValueError, match="schema_changes must be one of lenient, evolve, ignore, exception"):
        plan_day(START, [], "merge")
    assert POLICIES == (LENIENT, EVOLVE, IGNORE, EXCEPTION)


TYPES = ["bigint", "decimal(10,2)", "decimal(38,0)", "decimal(20,0)", "decimal(5,5)", "string", "boolean", "date",
         "timestamp", "timestamp_ntz", "binary", None]  # fmt: skip


def test_lenient_adds_a_new_name_the_rows_brought_already():
    start = {"shop.orders": {"id": "bigint", "amt": "decimal(10,2)", "amount": "decimal(12,2)"}}
    plan = plan_day(start, _events(["ALTER TABLE orders RENAME COLUMN amt TO amount"]), LENIENT)
    assert plan.tables["shop.orders"].columns == start["shop.orders"] and plan.anomalies == ()


# three days of a canal topic's DDL (the three-day topic), as canal messages
THREE_DAYS = [
    ["CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, amt DECIMAL(10,2), note VARCHAR(20))",
     "ALTER TABLE shop.orders ADD COLUMN ts DATETIME(6)"],
    ["ALTER TABLE shop.orders RENAME COLUMN note TO remark", "ALTER TABLE shop.orders CHANGE amt amount DECIMAL(12,2)",
     "ALTER TABLE shop.orders MODIFY amount DECIMAL(14,2)", "ALTER TABLE shop.orders ADD PARTITION (PARTITION p0)"],
    ["ALTER TABLE shop.orders DROP COLUMN ts", "RENAME TABLE shop.orders TO shop.orders_2024",
     "DROP TABLE shop.orders_2024"],
]  # fmt: skip


def _canal_day(tmp_path, day: int, ddls: list[str]) -> list:
    from cdc_pipelines.schema_changes.ddl import read_event
    from tests.decode.oracles import decode_paths

    path = tmp_path / f"day{day}.jsonl"
    path.write_text("".join(
        json.dumps({"database": "shop", "table": "orders", "type": "ALTER", "isDdl": True, "sql": ddl, "data": None,
                    "old": None, "es": 1704067200000 + i, "ts": 1704067200000 + i, "pkNames": None}) + "\n"
        for i, ddl in enumerate(ddls)
    ))  # fmt: skip
    events = decode_paths("oms-canal", [path], topic="t", dt=f"2024-01-0{day}", options={}, envelope=None).events
    return [read_event(e) for e in events]


def _tables_after(plan, tables):
    """Every table's columns after the day, from those at its start: the ones the day did not touch, without
    those it renamed away or dropped, then the ones it changed."""
    gone = set(plan.dropped_tables) | {old for old, _ in plan.renamed_tables}
    kept = {name: dict(columns) for name, columns in tables.items() if name not in gone}
    return kept | {name: dict(table.columns) for name, table in plan.tables.items()}


@pytest.mark.parametrize("policy", [EVOLVE, LENIENT])
def test_three_days_of_a_canal_topic(tmp_path, policy):
    tables: dict = {}
    days = []
    for day, ddls in enumerate(THREE_DAYS, 1):
        plan = plan_day(tables, _canal_day(tmp_path, day, ddls), policy)
        tables = _tables_after(plan, tables)
        days.append(({n: ", ".join(c) for n, c in tables.items()}, [a.kind for a in plan.anomalies]))
    assert (
        days
        == {
            EVOLVE: [
                ({"shop.orders": "id, amt, note, ts"}, []),
                ({"shop.orders": "id, amount, remark, ts"}, ["ddl_unread"]),
                ({}, []),
            ],
            LENIENT: [
                ({"shop.orders": "id, amt, note, ts"}, []),
                ({"shop.orders": "id, amt, note, ts, remark, amount"}, ["ddl_unread"]),
                ({"shop.orders": "id, amt, note, ts, remark, amount"}, []),
            ],
        }[policy]
    )


def test_three_days_under_exception_fail_on_the_first(tmp_path):
    with pytest.raises(SchemaChangeRefused, match="table shop.orders: schema change in event"):
        plan_day({}, _canal_day(tmp_path, 1, THREE_DAYS[0]), EXCEPTION)
