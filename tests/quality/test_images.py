"""image_presence_check: each op carries exactly the images it implies; broken ones fail only this rule."""

from __future__ import annotations

from cdc_pipelines.quality import Thresholds
from tests.quality.rows import NOW, clean_events, event, failing_rules

RULE = "image_presence_check"

IMAGE = {"id": "1", "name": "a", "created": "2024-01-01 10:00:00.123"}


def test_clean_events_pass_every_rule(judged):
    assert failing_rules(judged(clean_events())) == {}


def test_insert_with_a_before_image_fails_only_this_rule(judged):
    bad = event(before=IMAGE)
    assert failing_rules(judged([*clean_events(), bad])) == {"image_presence_check": ["INSERT with a before image"]}


def test_delete_without_a_before_image_fails_only_this_rule(judged):
    bad = event(op="DELETE", after=None, before=None)
    assert failing_rules(judged([*clean_events(), bad])) == {"image_presence_check": ["DELETE without a before image"]}


def test_update_without_before_is_fine_only_where_the_format_lacks_it(judged):
    rows = [
        event(op="UPDATE", source_format="dataworks-json"),
        event(op="UPDATE", source_format="oms-debezium-smt"),
        event(op="UPDATE", event_id="canal-update"),
    ]
    result = judged(rows)[RULE]
    assert (result.checked, result.failed, result.passed) == (3, 1, False)
    assert result.examples == [
        {
            "id": "canal-update",
            "reason": "UPDATE without a before image",
            "source_topic": "orders",
            "table": "shop.orders",
        }
    ]


def test_ddl_and_control_events_and_sub_check_counts(judged):
    rows = [
        *clean_events(),
        event(op="DDL", after=None, ddl="  "),
        event(op="DDL", ddl="ALTER TABLE t ADD c INT"),
        event(op="TX_END", after=None, before=IMAGE),
        event(op="TRUNCATE", after=None),  # not checked: formats differ on what a truncate carries
    ]
    result = judged(rows)[RULE]
    assert sorted(e["reason"] for e in result.examples) == [
        "DDL with a row image",
        "DDL without DDL text",
        "TX_END with a row image",
    ]
    assert result.checks == {
        "insert_upsert": {"checked": 1, "failed": 0},
        "delete": {"checked": 1, "failed": 0},
        "update": {"checked": 1, "failed": 0},
        "ddl": {"checked": 3, "failed": 2},
        "control": {"checked": 2, "failed": 1},
    }
    assert (result.checked, result.failed) == (8, 3)
    assert result.groups[0]["source_topic"] == "orders"


def test_threshold_allows_a_failure_ratio(judged):
    rows = [event(), event(), event(), event(before=IMAGE)]
    assert not judged(rows)[RULE].passed
    assert judged(rows, thresholds=Thresholds(now=NOW, max_failure_ratio=0.25))[RULE].passed
