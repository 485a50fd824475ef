"""Routes of sharded tables into one sink, and the shards' agreement on a rename or drop."""

from __future__ import annotations

import pytest

from cdc_pipelines.schema_changes.ddl import parse_ddl
from cdc_pipelines.schema_changes.policy import EVOLVE, LENIENT, DdlEvent, plan_day
from cdc_pipelines.schema_changes.routes import (
    Route,
    RouteError,
    ShardAgreement,
    parse_route,
    route,
    routes_of,
)

ROUTES = routes_of([
    {"source_table": r"shop\.orders_[0-9]+", "sink_table": "shop.orders", "key": ["_cdc_source_table", "id"]},
    {"source_table": r"shop_[0-9]+\.users", "sink_table": "crm.users"},
    {"source_table": r"shop\..*", "sink_table": "shop.rest"},
])  # fmt: skip


@pytest.mark.parametrize(
    ("db", "table", "routed"),
    [
        ("shop", "orders_00", ("shop", "orders", "shop.orders_00")),
        ("shop", "orders_63", ("shop", "orders", "shop.orders_63")),
        ("shop_7", "users", ("crm", "users", "shop_7.users")),
        ("shop", "orders_x", ("shop", "rest", "shop.orders_x")),  # the first route that matches wins
        ("shop", "orders_00_bak", ("shop", "rest", "shop.orders_00_bak")),  # a route matches the whole name
        ("crm", "orders_00", None),
        (None, "orders_00", None),
    ],
)
def test_route(db, table, routed):
    assert route(ROUTES, db, table) == routed


def test_route_forms():
    assert parse_route(r"shop\.orders_[0-9]+=shop.orders") == Route(r"shop\.orders_[0-9]+", "shop.orders")
    assert parse_route("(?=shop)shop\\..*=shop.all").source_table == "(?=shop)shop\\..*"  # split at the last =
    assert ROUTES[0].key == ("_cdc_source_table", "id") and ROUTES[1].key == ()
    assert routes_of(None) == ()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: parse_route("shop.orders"), "is not REGEX=DB.TABLE"),
        (lambda: parse_route("[=shop.orders"), "is not a regular expression"),
        (lambda: parse_route("a=orders"), "is not db.table"),
        (lambda: routes_of({"source_table": "a", "sink_table": "b.c"}), "routes must be a list"),
        (lambda: routes_of([{"source_table": "a"}]), "needs a source_table and a sink_table"),
        (lambda: routes_of([{"source_table": "a", "sink_table": "b.c", "to": 1}]), "takes source_table"),
        (lambda: routes_of([{"source_table": "a", "sink_table": "b.c", "key": "id"}]), "is not a list"),
        (lambda: routes_of([{"source_table": "a", "sink_table": "b.c", "key": [""]}]), "is not a list"),
    ],
)
def test_bad_routes(make, message):
    with pytest.raises(RouteError, match=message):
        make()


def test_shard_agreement():
    agreement = ShardAgreement({"shop.orders": ["shop.orders_00", "shop.orders_01"]})
    assert not agreement.agree("shop.orders", ("RENAME", "amt", "amount"), "shop.orders_00")
    assert agreement.agree("shop.orders", ("RENAME", "amt", "amount"), "shop.orders_01")
    assert not agreement.agree("shop.orders", ("DROP", "note"), "shop.orders_01")
    assert agreement.pending() == [("shop.orders", ("DROP", "note"), ("shop.orders_00",))]


SHARDS = {"shop.orders": [f"shop.orders_{i:02}" for i in range(16)]}
START = {"shop.orders": {"id": "bigint", "amt": "decimal(10,2)", "note": "string"}}


def _events(ddls: list[tuple[str, str]]) -> list[DdlEvent]:
    return [DdlEvent(f"e{i}", d, tuple(parse_ddl(d, "mysql")), "shop", t) for i, (t, d) in enumerate(ddls, 1)]


def test_sixteen_shards_rename_when_every_shard_has():
    renames = [(f"orders_{i:02}", f"ALTER TABLE orders_{i:02} RENAME COLUMN amt TO amount") for i in range(16)]
    plan = plan_day(START, _events(renames), EVOLVE, ROUTES, SHARDS)
    assert [s.event_id for s in plan.steps if s.applied] == ["e16"]  # at the last shard's DDL
    assert plan.tables["shop.orders"].renamed == (("amt", "amount"),)
    assert plan.anomalies == ()


def test_shards_that_disagree_keep_the_column():
    ddls = [("orders_00", "ALTER TABLE orders_00 RENAME COLUMN amt TO amount"),
            ("orders_01", "ALTER TABLE orders_01 CHANGE amt amount DECIMAL(12,2)"),
            ("orders_01", "ALTER TABLE orders_01 ADD COLUMN x INT"),
            ("orders_00", "ALTER TABLE orders_00 DROP COLUMN note"),
            ("orders_01", "DROP TABLE orders_01")]  # fmt: skip
    plan = plan_day(START, _events(ddls), EVOLVE, ROUTES)  # the shards: those the day's DDL names
    assert [f"{s.event_id} {s.action} {s.shard}" for s in plan.steps] == [
        "e1 wait for every shard shop.orders_00",
        "e2 apply shop.orders_01",
        "e3 apply shop.orders_01",
        "e4 wait for every shard shop.orders_00",
        "e5 skip: a shard of a routed sink shop.orders_01",
    ]
    orders = plan.tables["shop.orders"]
    assert dict(orders.columns) == {"id": "bigint", "amount": "decimal(12,2)", "note": "string", "x": "bigint"}
    assert [(a.kind, a.event_id, a.detail) for a in plan.anomalies] == [
        ("shards_disagree", "e4", "DROP note not in shop.orders_01")
    ]
    assert plan.dropped_tables == ()


def test_a_shards_create_widens_the_sink():
    ddls = [("orders_16", "CREATE TABLE orders_16 (id BIGINT, amt DECIMAL(14,2), extra VARCHAR(3))")]
    plan = plan_day(START, _events(ddls), LENIENT, ROUTES, SHARDS)
    assert dict(plan.tables["shop.orders"].columns) == {
        "id": "bigint", "amt": "decimal(14,2)", "note": "string", "extra": "string",
    }  # fmt: skip
    assert plan.created == () and plan.anomalies == ()


def test_a_shards_truncate_names_the_shard():
    plan = plan_day(START, _events([("orders_03", "TRUNCATE TABLE orders_03")]), EVOLVE, ROUTES, SHARDS)
    assert plan.truncated == ("shop.orders_03",) and plan.steps == ()
