"""conservation_check: read == decoded + rejected + filtered, reject rate under a threshold, top reasons."""

from __future__ import annotations

from cdc_pipelines.quality import Thresholds, conservation_check
from cdc_pipelines.quality.rejects import RejectSummary
from tests.quality.rows import NOW, clean_events, failing_rules, reject

RULE = "conservation_check"


def test_read_not_decoded_plus_rejected_fails_only_this_rule(judged):
    events = clean_events()  # 5 events, one message each
    failing = failing_rules(judged(events, recorded={"orders": {"read": 7}}))
    assert failing == {"conservation_check": ["read 7 != decoded 5 + rejected 0", "read 7 != decoded 5 + rejected 0"]}


def test_balanced_partition_with_rejects_reports_reasons(judged):
    rejects = [reject(1), reject(2), reject(3, "empty line")]
    events = clean_events()
    result = judged(events, rejects=rejects, thresholds=Thresholds(now=NOW, max_reject_rate=0.5))[RULE]
    assert result.passed and result.info["balance_checked"]
    assert (result.info["read"], result.info["decoded"], result.info["rejected"]) == (8, 5, 3)
    assert result.info["reject_reasons"] == [
        {"reason": "not a valid JSON object", "count": 2},
        {"reason": "empty line", "count": 1},
    ]
    assert [e["id"] for e in result.examples] == [
        "file:/x/part-1.jsonl:1",
        "file:/x/part-1.jsonl:2",
        "file:/x/part-1.jsonl:3",
    ]
    assert result.groups == [
        {
            "source_topic": "orders",
            "table": "*",
            "read": 8,
            "decoded": 5,
            "rejected": 3,
            "filtered": 0,
            "duplicates": 0,
            "balanced": True,
        }
    ]
    # 3/8 rejected is over the default 5 %
    strict = judged(events, rejects=rejects)[RULE]
    assert not strict.passed and strict.checks["balance"] == {"checked": 2, "failed": 0}


def test_unrecorded_read_leaves_the_balance_unchecked(judged):
    result = judged(clean_events(), recorded={})[RULE]
    assert result.passed and result.info["balance_checked"] is False
    assert result.checks["balance"]["checked"] == 0


def test_library_function_takes_plain_counts():
    empty = RejectSummary(())
    assert conservation_check(10, 10, 0, empty).passed
    result = conservation_check(10, 9, 0, empty)
    assert not result.passed and result.examples[0]["reason"] == "read 10 != decoded 9 + rejected 0"
    assert conservation_check(0, 0, 0, empty).passed  # a quiet day


def test_filtered_messages_balance_the_read():
    empty = RejectSummary(())
    assert conservation_check(10, 8, 0, empty, filtered=2).passed
    result = conservation_check(10, 7, 0, empty, filtered=1)
    assert not result.passed and result.examples[0]["reason"] == "read 10 != decoded 7 + rejected 0 + filtered 1"
