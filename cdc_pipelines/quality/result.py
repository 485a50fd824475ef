"""The result every rule returns, and the one way an event rule is judged and counted.

An event rule declares its sub-checks in order and one `verdicts` function that judges one event (a dict of
the canonical row, times as epoch microseconds): per sub-check whether it applies, whether it fails and why.
`RuleTally` counts those verdicts by (source_topic, table) with each group's first failing examples; tallies
of separate batches merge (`merge`), so an engine may judge a day's batches wherever it likes (in this
process, in a pool, in Spark's tasks) and add the tallies up. `rule_result` turns the merged tally into the
rule's `RuleResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_EXAMPLES = 5
NO_TABLE = "(none)"
# failing examples are the first by this order, nulls first
EXAMPLE_ORDER = ("source_topic", "source_file", "source_line", "event_id")
FLAG_SEPARATOR = "__"


@dataclass
class RuleResult:
    """Outcome of one rule over one partition.

    `checked`/`failed` count events (messages for conservation); `checks` holds each sub-check's own
    counts; `info` holds figures that are reported but are not failures (key changes, tables without
    a PK, reject reasons); `groups` breaks the counts down by source_topic and table; `examples` are at
    most five failing events as {id, reason, source_topic, table}.
    """

    rule: str
    checked: int
    failed: int
    passed: bool
    threshold: float
    checks: dict[str, dict[str, int]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    groups: list[dict[str, Any]] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failure_ratio(self) -> float:
        return self.failed / self.checked if self.checked else 0.0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleResult:
        """The result `to_dict` gave (its derived `failure_ratio` dropped)."""
        return cls(**{k: v for k, v in data.items() if k != "failure_ratio"})

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "passed": self.passed,
            "checked": self.checked,
            "failed": self.failed,
            "failure_ratio": self.failure_ratio,
            "threshold": self.threshold,
            "checks": self.checks,
            "info": self.info,
            "groups": self.groups,
            "examples": self.examples,
        }


def event_table_label(event: Mapping[str, Any]) -> str:
    """`db.schema.table` of an event (its null parts left out), `(none)` for events without an object."""
    label = ".".join(p for p in (event["db"], event["db_schema"], event["table_name"]) if p is not None)
    return label or NO_TABLE


def flag_column(rule: str, check: str) -> str:
    """A sub-check's column of the GX flags (`RuleTally.add`'s `flags`)."""
    return f"{rule}{FLAG_SEPARATOR}{check}"


def null_first(*values: Any) -> tuple:
    """A sort key ordering ascending with nulls first."""
    return tuple((v is not None, v) for v in values)


# one sub-check's verdict on one event: applies, fails, and the reason (read only where it fails)
Verdict = tuple[bool, bool, "str | None"]


@dataclass(frozen=True)
class EventRule:
    """A rule judged event by event: its sub-checks and info flags (in order), the function giving their
    verdicts on one event, and its threshold. `verdicts` may read what `day.DayContext` sets on the event
    (figures of the whole day, such as the events sharing its id)."""

    name: str
    checks: Sequence[str]
    info: Sequence[str]
    verdicts: Callable[[Mapping[str, Any]], tuple[Sequence[Verdict], Sequence[bool]]]
    threshold: float = 0.0


@dataclass
class GroupTally:
    """One (source_topic, table)'s counts of a rule: events checked and failed, each sub-check's applies
    and fails, each info flag, and the first MAX_EXAMPLES failing events as (EXAMPLE_ORDER..., reason)."""

    checked: int = 0
    failed: int = 0
    applies: list[int] = field(default_factory=list)
    fails: list[int] = field(default_factory=list)
    info: list[int] = field(default_factory=list)
    examples: list[tuple] = field(default_factory=list)

    def merge(self, other: GroupTally) -> None:
        self.checked += other.checked
        self.failed += other.failed
        self.applies = [a + b for a, b in zip(self.applies, other.applies, strict=True)]
        self.fails = [a + b for a, b in zip(self.fails, other.fails, strict=True)]
        self.info = [a + b for a, b in zip(self.info, other.info, strict=True)]
        self.examples = first_examples([*self.examples, *other.examples])


def first_examples(examples: Iterable[tuple], limit: int = MAX_EXAMPLES) -> list[tuple]:
    """The first `limit` examples by their fields, nulls first."""
    return sorted(examples, key=lambda e: null_first(*e))[:limit]


@dataclass
class RuleTally:
    """A rule's counts over some events, by (source_topic, table): what merges across batches."""

    groups: dict[tuple, GroupTally] = field(default_factory=dict)

    def add(
        self, rule: EventRule, events: Iterable[Mapping[str, Any]], flags: dict[str, list] | None = None
    ) -> RuleTally:
        """Judge `events` (each with its `table` label) and count their verdicts in; with `flags`, each event's
        GX flags appended to its columns there (`flag_column`'s per sub-check: null where it does not apply,
        else whether it fails; the rule's own: null where none applies, else whether any fails)."""
        checks, infos = len(rule.checks), len(rule.info)
        columns = [flags.setdefault(flag_column(rule.name, n), []) for n in rule.checks] if flags is not None else None
        own = flags.setdefault(rule.name, []) if flags is not None else None
        for event in events:
            key = (event["source_topic"], event["table"])
            group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = GroupTally(0, 0, [0] * checks, [0] * checks, [0] * infos, [])
            verdicts, info = rule.verdicts(event)
            reason, applies = None, False
            for i, (a, f, why) in enumerate(verdicts):
                if a:
                    applies = True
                    group.applies[i] += 1
                    if f:
                        group.fails[i] += 1
                        if reason is None:
                            reason = why
            for i, flag in enumerate(info):
                group.info[i] += bool(flag)
            if columns is not None:
                for column, (a, f, _) in zip(columns, verdicts, strict=True):
                    column.append(bool(f) if a else None)
                own.append(any(a and f for a, f, _ in verdicts) if applies else None)
            group.checked += applies
            if reason is not None:
                group.failed += 1
                group.examples.append((*(event[c] for c in EXAMPLE_ORDER), reason))
                if len(group.examples) > 4 * MAX_EXAMPLES:
                    group.examples = first_examples(group.examples)
        return self

    def merge(self, other: RuleTally) -> RuleTally:
        for key, group in other.groups.items():
            if key in self.groups:
                self.groups[key].merge(group)
            else:
                self.groups[key] = group
        return self


def rule_result(rule: EventRule, tally: RuleTally) -> RuleResult:
    """The rule's RuleResult from its merged tally: totals, per sub-check and info figures, the groups in
    (topic, table) order and the first MAX_EXAMPLES failing events of the day."""
    keys = sorted(tally.groups, key=lambda k: null_first(*k))
    groups = [tally.groups[k] for k in keys]
    checked, failed = sum(g.checked for g in groups), sum(g.failed for g in groups)
    candidates = [(e, table) for (_, table), g in zip(keys, groups, strict=True) for e in g.examples]
    candidates.sort(key=lambda x: null_first(*x[0]))
    examples = [{"id": e[3], "reason": e[4], "source_topic": e[0], "table": table}
                for e, table in candidates[:MAX_EXAMPLES]]  # fmt: skip
    ratio = failed / checked if checked else 0.0
    return RuleResult(
        rule=rule.name,
        checked=checked,
        failed=failed,
        passed=ratio <= rule.threshold,
        threshold=rule.threshold,
        checks={
            n: {"checked": sum(g.applies[i] for g in groups), "failed": sum(g.fails[i] for g in groups)}
            for i, n in enumerate(rule.checks)
        },  # fmt: skip
        info={n: sum(g.info[i] for g in groups) for i, n in enumerate(rule.info)},
        groups=[
            {
                "source_topic": topic,
                "table": table,
                "checked": g.checked,
                "failed": g.failed,
                **{n: g.info[i] for i, n in enumerate(rule.info)},
            }
            for (topic, table), g in zip(keys, groups, strict=True)
        ],  # fmt: skip
        examples=examples,
    )
