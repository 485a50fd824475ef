"""The result every rule returns, and the one way an event rule is judged and counted.

An event rule declares its sub-checks and one `verdicts` function over one event (a dict of the canonical row,
times as epoch microseconds): per sub-check whether it applies, whether it fails and why. `RuleTally` counts
the verdicts by (source_topic, table) with each group's first failing examples; tallies of separate batches
merge, so an engine judges a day's batches wherever it likes; `rule_result` turns the merged tally into a
`RuleResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

MAX_EXAMPLES = 5
NO_TABLE = "(none)"
# failing examples are the first by this order, nulls first
EXAMPLE_ORDER = ("source_topic", "source_file", "source_line", "event_id")
FLAG_SEPARATOR = "__"


@dataclass
class RuleResult:
    """Outcome of one rule over one partition: `checked`/`failed` count events (messages for conservation),
    `checks` each sub-check's own counts, `info` figures reported but not failures (key changes, tables without a
    PK, reject reasons), `groups` the counts by source_topic and table, `examples` at most five failing events as
    {id, reason, source_topic, table}.
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
        return {**asdict(self), "failure_ratio": self.failure_ratio}


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


@dataclass(frozen=True)
class _Outcome:
    """What one event's verdicts and info flags count: the sub-checks that apply and fail, the info flags set,
    whether any sub-check applies, the first failing one's reason, and the event's GX flags (per sub-check,
    then the rule's own)."""

    applies: tuple[int, ...]
    fails: tuple[int, ...]
    info: tuple[int, ...]
    checked: bool
    reason: str | None
    flags: tuple

    @staticmethod
    def of(verdicts: Sequence[Verdict], info: Sequence[bool]) -> _Outcome:
        applies = tuple(i for i, (a, _, _) in enumerate(verdicts) if a)
        fails = tuple(i for i in applies if verdicts[i][1])
        checked = bool(applies)
        own = bool(fails) if checked else None
        return _Outcome(applies, fails, tuple(i for i, flag in enumerate(info) if flag), checked,
                        next((verdicts[i][2] for i in fails if verdicts[i][2] is not None), None),
                        (*(bool(f) if a else None for a, f, _ in verdicts), own))  # fmt: skip


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
        columns = [flags.setdefault(flag_column(rule.name, n), []) for n in rule.checks] if flags is not None else None
        own = flags.setdefault(rule.name, []) if flags is not None else None
        # events of one group and one outcome (verdicts and info alike: most of a day) counted once, at the end
        counts: dict[tuple, int] = {}
        outcomes: dict[tuple, _Outcome] = {}
        flagged: list[tuple] = []
        for event in events:
            verdicts, info = rule.verdicts(event)
            seen = (tuple(verdicts), tuple(info))
            outcome = outcomes.get(seen)
            if outcome is None:
                outcome = outcomes[seen] = _Outcome.of(*seen)
            key = (event["source_topic"], event["table"], outcome)
            counts[key] = counts.get(key, 0) + 1
            if outcome.reason is not None:
                group = self._group(rule, key[:2])
                group.examples.append((*(event[c] for c in EXAMPLE_ORDER), outcome.reason))
                if len(group.examples) > 4 * MAX_EXAMPLES:
                    group.examples = first_examples(group.examples)
            if columns is not None:
                flagged.append(outcome.flags)
        for (topic, table, outcome), n in counts.items():
            group = self._group(rule, (topic, table))
            for i in outcome.applies:
                group.applies[i] += n
            for i in outcome.fails:
                group.fails[i] += n
            for i in outcome.info:
                group.info[i] += n
            group.checked += n * outcome.checked
            group.failed += n * (outcome.reason is not None)
        if columns is not None and flagged:
            for column, values in zip([*columns, own], zip(*flagged, strict=True), strict=True):
                column.extend(values)
        return self

    def _group(self, rule: EventRule, key: tuple) -> GroupTally:
        group = self.groups.get(key)
        if group is None:
            checks = len(rule.checks)
            group = self.groups[key] = GroupTally(0, 0, [0] * checks, [0] * checks, [0] * len(rule.info), [])
        return group

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
    checks = {
        n: {"checked": sum(g.applies[i] for g in groups), "failed": sum(g.fails[i] for g in groups)}
        for i, n in enumerate(rule.checks)
    }
    info = {n: sum(g.info[i] for g in groups) for i, n in enumerate(rule.info)}
    names = ("source_topic", "table", "checked", "failed", *rule.info)
    rows = [
        dict(zip(names, (*key, g.checked, g.failed, *g.info), strict=True)) for key, g in zip(keys, groups, strict=True)
    ]
    passed = (failed / checked if checked else 0.0) <= rule.threshold
    return RuleResult(rule.name, checked, failed, passed, rule.threshold, checks, info, rows, examples)
