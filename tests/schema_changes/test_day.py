"""The policies the snapshot applies to a day's DDL before it writes: `exception` refuses a day with a schema
change or an unread DDL, of its own topics only; `lenient` reads nothing; a policy of no known name stops at once."""

import pytest

from cdc_pipelines.schema_changes.day import UnknownPolicy, check_policies, refuse_schema_changes, refuses
from cdc_pipelines.schema_changes.policy import SchemaChangeRefused


def _ddl(n: int, sql: str, topic: str = "orders", meta=None) -> dict:
    return {"event_id": f"e{n}", "ddl": sql, "db": "shop", "table_name": "orders", "meta": meta, "source_topic": topic}


@pytest.mark.parametrize(
    "sql, refused",
    [
        ("ALTER TABLE orders ADD COLUMN note VARCHAR(20)", True),
        ("ALTER TABLE orders RENAME COLUMN amt TO amount", True),
        ("CREATE TABLE t2 (id INT PRIMARY KEY)", True),
        ("DROP TABLE orders", True),
        ("TRUNCATE TABLE orders", False),  # applied as rows are, never a schema change
        ("CREATE INDEX i ON orders (id)", False),
        ("ALTER TABLE orders FROBNICATE", True),  # not read: under exception the day fails
    ],
)
def test_exception_refuses_a_schema_change(sql, refused):
    events = [_ddl(1, "CREATE INDEX j ON orders (id)"), _ddl(2, sql)]
    if refused:
        with pytest.raises(SchemaChangeRefused, match="event e2"):
            refuse_schema_changes(events, "exception")
    else:
        refuse_schema_changes(events, "exception")


def test_only_the_exception_topics_are_read():
    events = [_ddl(1, "ALTER TABLE orders ADD COLUMN c INT", topic="other")]
    refuse_schema_changes(events, {"orders": "exception", "other": "lenient"})
    with pytest.raises(SchemaChangeRefused):
        refuse_schema_changes(events, {"other": "exception"})
    assert refuses({"a": "lenient", "b": "exception"}) and not refuses("lenient") and not refuses({})


def test_an_unknown_policy_stops_at_once():
    check_policies("lenient"), check_policies({"a": "exception", "b": "evolve", "c": "ignore"})
    with pytest.raises(UnknownPolicy, match="must be one of"):
        check_policies("sometimes")
