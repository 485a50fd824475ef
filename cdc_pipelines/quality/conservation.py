"""Conservation and reject rate: every message read was decoded, rejected or filtered (left out by a
table filter), and few were rejected. Redelivered messages (`cdc.duplicate_of`) are counted beside.

A decoder that drops messages without rejecting them loses data silently; a reject rate that jumps
usually means the source changed its format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from cdc_pipelines.model import meta_keys
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.rejects import RejectSummary
from cdc_pipelines.quality.result import MAX_EXAMPLES, RuleResult

RULE = "conservation_check"
TOP_REASONS = 10


@dataclass
class TopicCounts:
    """What one topic's events say of its messages: events, before halves of merged split updates (each
    was a message too) and redeliveries (events marked `cdc.duplicate_of`); merges across batches."""

    events: int = 0
    before_halves: int = 0
    duplicates: int = 0

    def merge(self, other: TopicCounts) -> TopicCounts:
        self.events += other.events
        self.before_halves += other.before_halves
        self.duplicates += other.duplicates
        return self


def count_events(counts: dict[str, TopicCounts], events) -> dict[str, TopicCounts]:
    """`counts` with `events` (dicts of canonical rows) counted in, by topic."""
    for e in events:
        meta = e["meta"] or {}
        topic = counts.get(e["source_topic"])
        if topic is None:
            topic = counts[e["source_topic"]] = TopicCounts()
        topic.events += 1
        topic.before_halves += meta.get(meta_keys.BEFORE_SOURCE_LINE) is not None
        topic.duplicates += meta.get(meta_keys.DUPLICATE_OF) is not None
    return counts


def counts_of(
    counts: dict[str, TopicCounts], lines: dict[str, int], rejects: RejectSummary
) -> dict[str, dict[str, int]]:
    """Messages decoded (the distinct input `lines` behind each topic's events, plus the before halves of
    merged split updates), rejected and redelivered, by topic, as the lake holds them."""
    rejected, out = rejects.by_topic(), {}
    for topic in {**counts, **rejected}:
        c = counts.get(topic, TopicCounts())
        out[topic] = {"decoded": lines.get(topic, 0) + c.before_halves, "rejected": rejected.get(topic, 0),
                      "events": c.events, "duplicates": c.duplicates}  # fmt: skip
    return out


def _imbalance(read, decoded, rejected, filtered) -> str:
    return f"read {read} != decoded {decoded} + rejected {rejected}" + (f" + filtered {filtered}" if filtered else "")


def conservation_check(
    read: int | None,
    decoded: int,
    rejected: int,
    rejects: RejectSummary,
    *,
    max_reject_rate: float = 0.05,
    per_topic: Mapping[str, Mapping[str, int | None]] | None = None,
    filtered: int = 0,
    duplicates: int = 0,
) -> RuleResult:
    """read == decoded + rejected + filtered (overall and per topic in `per_topic`), and reject rate <= threshold;
    `duplicates` (redelivered messages) reported, not judged. `read` None (no run recorded it): the balance is
    reported as not checked, not assumed. `rejects` supplies the top reject reasons and the failing examples.
    """
    groups = []
    for topic, c in sorted((per_topic or {}).items()):
        t_read = c.get("read")
        ok = t_read is None or t_read == c.get("decoded", 0) + c.get("rejected", 0) + c.get("filtered", 0)
        groups.append({"source_topic": topic, "table": "*", **c, "balanced": ok})
    balance_checked = read is not None
    balanced = not balance_checked or read == decoded + rejected + filtered
    unbalanced = [g for g in groups if not g["balanced"]]
    total = read if read is not None else decoded + rejected + filtered
    rate = rejected / total if total else 0.0
    imbalances = [("partition", "*", read, decoded, rejected, filtered)] if not balanced else []
    imbalances += [("topic", g["source_topic"], *(g.get(c, 0) for c in ("read", "decoded", "rejected", "filtered")))
                   for g in unbalanced]  # fmt: skip
    examples = [{"id": i, "reason": _imbalance(*counts), "source_topic": t} for i, t, *counts in imbalances]
    reasons = []
    if rejected:
        reasons = rejects.reasons(TOP_REASONS)
        examples += rejects.examples(MAX_EXAMPLES)
    balance = {
        "checked": int(balance_checked) + sum(g.get("read") is not None for g in groups),
        "failed": int(not balanced) + len(unbalanced),
    }
    checks = {"balance": balance, "reject_rate": {"checked": total, "failed": rejected}}
    info = {
        "read": read,
        "decoded": decoded,
        "rejected": rejected,
        "filtered": filtered,
        "duplicates": duplicates,
        "reject_rate": rate,
        "balance_checked": balance_checked,
        "reject_reasons": reasons,
    }
    passed = balanced and not unbalanced and rate <= max_reject_rate
    return RuleResult(RULE, total, rejected, passed, max_reject_rate, checks, info, groups, examples[:MAX_EXAMPLES])


def conservation_result(
    partition: Partition,
    found: dict[str, dict[str, int]],
    rejects: RejectSummary,
    thresholds: Thresholds = Thresholds(),
) -> RuleResult:
    """Recorded messages read (and filtered) vs decoded + rejected as `found` in the lake, overall and by
    topic; the redelivered messages the lake marks, by topic."""
    per_topic = {}
    for topic in sorted(set(found) | set(partition.recorded)):
        lake = found.get(topic, {"decoded": 0, "rejected": 0, "duplicates": 0})
        recorded = partition.recorded.get(topic, {})
        per_topic[topic] = {
            "read": recorded.get("read"),
            "decoded": lake["decoded"],
            "rejected": lake["rejected"],
            "filtered": recorded.get("filtered", 0),
            "duplicates": lake["duplicates"],
        }
    # a topic without recorded counts makes the partition's read unknown
    known = bool(per_topic) and all(c["read"] is not None for c in per_topic.values())
    result = conservation_check(
        sum(c["read"] for c in per_topic.values()) if known else None,
        sum(c["decoded"] for c in per_topic.values()),
        sum(c["rejected"] for c in per_topic.values()),
        rejects,
        max_reject_rate=thresholds.max_reject_rate,
        per_topic=per_topic,
        filtered=sum(c["filtered"] for c in per_topic.values()),
        duplicates=sum(c["duplicates"] for c in per_topic.values()),
    )
    return with_offset_gaps(result, partition.kafka_gaps)


def with_offset_gaps(result: RuleResult, gaps: list) -> RuleResult:
    """`result` with the Kafka offsets check: every gap or overlap between a day read from Kafka and the
    day beside it (`model.kafka_offsets.OffsetGap`) fails the rule and is listed, never silent. A
    lake with no Kafka days has no such check."""
    if not gaps:
        return result
    examples = [{"id": f"{g.source_topic}:{g.partition}", "reason": g.reason(), "source_topic": g.source_topic}
                for g in gaps]  # fmt: skip
    checks = {**result.checks, "kafka_offsets": {"checked": len(gaps), "failed": len(gaps)}}
    info = {**result.info, "kafka_offset_gaps": [g.reason() for g in gaps]}
    return replace(result, passed=False, checks=checks, info=info,
                   examples=(examples + list(result.examples))[:MAX_EXAMPLES])  # fmt: skip
