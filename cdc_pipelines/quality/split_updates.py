"""Split-update pairing, part of PK consistency: every before half found its after half.

DataWorks (`UPDATE_BEFOR` + `UPDATE_AFTER`), DTS SharePlex (`UPDATE BEFORE` + `UPDATE AFTER`) and
DataHub TUPLE write one update as two messages; the decoder pairs them by key. A before half left
alone is rejected (`... without its matching after half`), so orphans are found in the rejects as
well as in the events: a half that reached the table on its own is unpaired too.
"""

from __future__ import annotations

from cdc_pipelines.model import meta_keys
from cdc_pipelines.quality.rejects import RejectSummary
from cdc_pipelines.quality.result import MAX_EXAMPLES, RuleResult, Verdict

CHECK = "split_update_paired"
BEFORE_HALF_OPS = ("UPDATE_BEFOR", "UPDATE BEFORE")
AFTER_HALF_OPS = ("UPDATE_AFTER", "UPDATE AFTER")
ORPHAN_REJECT = " without its matching after half"
REJECTS_TABLE = "(rejected messages)"


def split_update_verdict(event) -> Verdict:
    """Events written as a split half: a before half standing alone, or an after half with no before image
    and no paired lineage, fails (a merged `UPDATE_AFTER` carrying both images passes)."""
    raw_op = event["raw_op"]
    lone_before = raw_op in BEFORE_HALF_OPS
    paired = (event["meta"] or {}).get(meta_keys.BEFORE_SOURCE_LINE) is not None
    lone_after = raw_op in AFTER_HALF_OPS and event["before"] is None and not paired
    applies = event["op"] == "UPDATE" and raw_op in (*BEFORE_HALF_OPS, *AFTER_HALF_OPS)
    half = "after" if lone_before else "before"
    return applies, lone_before or lone_after, f"{raw_op} half without its {half} half"


def add_orphan_rejects(result: RuleResult, rejects: RejectSummary, info_keys: list[str]) -> RuleResult:
    """Count the before halves the decoder rejected as orphans into `result` (checked and failed),
    one group per topic, and add them to the examples after the failing events."""
    by_topic = rejects.by_topic(ORPHAN_REJECT)
    total = sum(by_topic.values())
    if not total:
        return result
    sub = result.checks.setdefault(CHECK, {"checked": 0, "failed": 0})
    sub["checked"] += total
    sub["failed"] += total
    result.checked += total
    result.failed += total
    result.passed = result.failure_ratio <= result.threshold
    result.groups += [
        {"source_topic": t, "table": REJECTS_TABLE, "checked": n, "failed": n, **dict.fromkeys(info_keys, 0)}
        for t, n in sorted(by_topic.items())
    ]
    orphans = rejects.examples(MAX_EXAMPLES - len(result.examples), contains=ORPHAN_REJECT)
    result.examples += [{**example, "table": REJECTS_TABLE} for example in orphans]
    return result
