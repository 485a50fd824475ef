"""The result object every rule returns, and the one aggregation that fills it.

A rule declares sub-checks (does it apply to an event, does it fail, why); `rule_columns` turns them
into per-event flag columns of the day's one scan (see `scan`), and `rule_aggregates` counts those
flags by (source_topic, table) and keeps each group's first failing examples (`min_by` with k) in
the same aggregation, so a day's event rules cost one Spark job and only aggregates reach the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

MAX_EXAMPLES = 5
NO_TABLE = "(none)"


class SubCheck(NamedTuple):
    """One sub-check of a rule: rows it `applies` to, rows that `fail`, and a short `reason` text."""

    applies: Column
    fails: Column
    reason: Column


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


def table_label() -> Column:
    """`db.schema.table` of an event, `(none)` for events without an object (heartbeats)."""
    label = F.concat_ws(".", F.col("db"), F.col("db_schema"), F.col("table_name"))
    return F.when(label == "", F.lit(NO_TABLE)).otherwise(label)


def event_table_label(event: Mapping[str, Any]) -> str:
    """`table_label` of one event as a dict (`concat_ws` leaves the nulls out)."""
    label = ".".join(p for p in (event["db"], event["db_schema"], event["table_name"]) if p is not None)
    return label or NO_TABLE


KEY_COLUMNS = ("event_id", "source_topic", "source_file", "source_line", "table")
# failing examples are the first by this order (min_by keeps nulls first, as orderBy does)
EXAMPLE_ORDER = ("source_topic", "source_file", "source_line", "event_id")


@dataclass(frozen=True)
class EventRule:
    """A rule judged event by event: its sub-checks, its boolean info flags and its threshold."""

    name: str
    checks: Mapping[str, SubCheck]
    info: Mapping[str, Column] = field(default_factory=dict)
    threshold: float = 0.0
    # adds columns its sub-checks share: figures of the whole day joined back, or values computed once
    added_columns: Callable[[DataFrame], DataFrame] | None = None

    def prepare(self, events: DataFrame) -> DataFrame:
        """`events` with the rule's added columns (unchanged for a rule without any)."""
        return self.added_columns(events) if self.added_columns else events

    def column(self, kind: str, name: str = "") -> str:
        """The scan's column of this rule: a(pplies)/f(ails) per sub-check, i(nfo), reason."""
        return rule_column(self.name, kind, name)


def rule_column(rule: str, kind: str, name: str = "") -> str:
    return f"{kind}__{rule}__{name}" if name else f"{kind}__{rule}"


FLAG_SEPARATOR = "__"


def flag_column(rule: str, check: str) -> str:
    """A sub-check's column of the GX flags (`expectations.flag_frame`, `in_process.flag_rows`)."""
    return f"{rule}{FLAG_SEPARATOR}{check}"


class NeedsSpark(Exception):
    """An event whose figures the Python judges cannot give exactly as Spark's expressions do (a time
    outside Python's years, a `cdc.changed_columns` Spark would read leniently): judge the day with Spark."""


# one sub-check's verdict on one event: applies, fails, and the reason (read only where it fails)
Verdict = tuple[bool, bool, "str | None"]


@dataclass(frozen=True)
class EventJudge:
    """An `EventRule` judged in Python, one event (a dict of the canonical row, times as epoch
    microseconds) at a time: the same sub-checks in the same order, each giving a `Verdict`, and the
    same info flags. It judges a day small enough to need no JVM (`in_process`); the Spark suite holds
    both forms to the same results on every fixture (`tests/quality/test_in_process.py`)."""

    name: str
    checks: Sequence[str]
    info: Sequence[str]
    verdicts: Callable[[Mapping[str, Any]], tuple[Sequence[Verdict], Sequence[bool]]]
    threshold: float = 0.0
    # day-wide figures the verdicts read (the keys rule's tables and repeated ids), set on the events
    prepare: Callable[[list[dict]], None] | None = None

    def column(self, kind: str, name: str = "") -> str:
        return rule_column(self.name, kind, name)


def key_columns() -> list[Column]:
    """What every event rule groups and cites by: id, topic, line and table label."""
    return [F.col(c) for c in KEY_COLUMNS[:-1]] + [table_label().alias("table")]


def rule_columns(rule: EventRule) -> list[Column]:
    """The rule's per-event columns: applies and fails per sub-check, info flags, the first failing reason.

    An event counts as checked when any sub-check applies and as failed when any applicable one fails;
    its reason is the first failing sub-check's, in the order given.
    """
    flags = {}
    for name, check in rule.checks.items():
        applies = F.coalesce(check.applies, F.lit(False))
        flags[rule.column("a", name)] = applies
        flags[rule.column("f", name)] = applies & F.coalesce(check.fails, F.lit(False))
    reasons = [F.when(flags[rule.column("f", n)], c.reason) for n, c in rule.checks.items()]
    return [
        *[col.alias(name) for name, col in flags.items()],
        *[F.coalesce(col, F.lit(False)).alias(rule.column("i", n)) for n, col in rule.info.items()],
        F.coalesce(*reasons, F.lit(None)).alias(rule.column("reason")),
    ]


def _counted(rule: EventRule) -> list[str]:
    return [
        *[rule.column(k, n) for n in rule.checks for k in ("a", "f")],
        *[rule.column("i", n) for n in rule.info],
    ]


def rule_aggregates(rule: EventRule) -> list[Column]:
    """Per group: checked, failed, each flag's count and the first MAX_EXAMPLES failing events."""
    any_applies = F.lit(False)
    for name in rule.checks:
        any_applies = any_applies | F.col(rule.column("a", name))
    reason = F.col(rule.column("reason"))
    example = F.struct(*[F.col(c) for c in EXAMPLE_ORDER], reason.alias("reason"))
    return [
        F.count(F.when(any_applies, 1)).alias(rule.column("checked")),
        F.count(reason).alias(rule.column("failed")),
        *[F.count(F.when(F.col(c), 1)).alias(c) for c in _counted(rule)],
        F.min_by(example, F.when(reason.isNotNull(), F.struct(*EXAMPLE_ORDER)), MAX_EXAMPLES).alias(
            rule.column("examples")
        ),
    ]


def null_first(*values: Any) -> tuple:
    """A sort key ordering like Spark's ascending sort: nulls first."""
    return tuple((v is not None, v) for v in values)


def rule_result(rule: EventRule | EventJudge, rows: list) -> RuleResult:
    """The rule's RuleResult from the grouped rows of `rule_aggregates` (any order), or of `judged_groups`."""
    groups = sorted((r if isinstance(r, dict) else r.asDict() for r in rows),
                    key=lambda g: null_first(g["source_topic"], g["table"]))  # fmt: skip
    counted = [rule.column("checked"), rule.column("failed"), *_counted(rule)]
    total = {c: sum(g[c] for g in groups) for c in counted}
    candidates = [(e, g["table"]) for g in groups for e in g[rule.column("examples")] or []]
    candidates.sort(key=lambda x: null_first(*(x[0][c] for c in EXAMPLE_ORDER)))
    examples = [
        {"id": e.event_id, "reason": e.reason, "source_topic": e.source_topic, "table": table}
        for e, table in candidates[:MAX_EXAMPLES]
    ]
    checked, failed = total[rule.column("checked")], total[rule.column("failed")]
    ratio = failed / checked if checked else 0.0
    return RuleResult(
        rule=rule.name,
        checked=checked,
        failed=failed,
        passed=ratio <= rule.threshold,
        threshold=rule.threshold,
        checks={n: {"checked": total[rule.column("a", n)], "failed": total[rule.column("f", n)]} for n in rule.checks},
        info={n: total[rule.column("i", n)] for n in rule.info},
        groups=[
            {
                "source_topic": g["source_topic"],
                "table": g["table"],
                "checked": g[rule.column("checked")],
                "failed": g[rule.column("failed")],
                **{n: g[rule.column("i", n)] for n in rule.info},
            }
            for g in groups
        ],
        examples=examples,
    )


def aggregate_rules(events: DataFrame, rules: list[EventRule]) -> dict[str, RuleResult]:
    """Every rule's figures from the scan's per-event columns in one group-by (one Spark job)."""
    if not rules:
        return {}
    rows = events.groupBy("source_topic", "table").agg(*[a for r in rules for a in rule_aggregates(r)]).collect()
    return {r.name: rule_result(r, rows) for r in rules}


def evaluate(df: DataFrame, rule: EventRule) -> RuleResult:
    """One rule over a frame of canonical events (its own scan and job): for callers with one rule only."""
    return aggregate_rules(rule.prepare(df).select(*key_columns(), *rule_columns(rule)), [rule])[rule.name]


def judged_groups(judge: EventJudge, events: Iterable[Mapping[str, Any]]) -> list[dict]:
    """What `rule_aggregates` gives per (source_topic, table), from the judge's verdicts on `events` (each
    carrying its `table` label): counts of every flag, and each group's first failing examples."""
    groups: dict[tuple, dict] = {}
    counted = _counted(judge)
    flags = [(judge.column("a", n), judge.column("f", n)) for n in judge.checks]
    info = [judge.column("i", n) for n in judge.info]
    checked, failed, examples = judge.column("checked"), judge.column("failed"), judge.column("examples")
    for event in events:
        key = (event["source_topic"], event["table"])
        group = groups.get(key)
        if group is None:
            group = groups[key] = {"source_topic": key[0], "table": key[1], checked: 0, failed: 0,
                                   **dict.fromkeys(counted, 0), examples: []}  # fmt: skip
        verdicts, infos = judge.verdicts(event)
        reason = None
        applies = False
        for (a_col, f_col), (a, f, why) in zip(flags, verdicts, strict=True):
            if a:
                applies = True
                group[a_col] += 1
                if f:
                    group[f_col] += 1
                    if reason is None:
                        reason = why
        for i_col, flag in zip(info, infos, strict=True):
            group[i_col] += bool(flag)
        group[checked] += applies
        if reason is not None:
            group[failed] += 1
            group[examples].append(Row(**{c: event[c] for c in EXAMPLE_ORDER}, reason=reason))
    for group in groups.values():
        group[examples] = sorted(group[examples], key=lambda e: null_first(*(e[c] for c in EXAMPLE_ORDER)))[
            :MAX_EXAMPLES
        ]
    return list(groups.values())


def judge_rules(events: list[dict], judges: Sequence[EventJudge]) -> dict[str, RuleResult]:
    """Every judge's RuleResult over `events` (dicts with their `table` label), as `aggregate_rules` gives."""
    for judge in judges:
        if judge.prepare is not None:
            judge.prepare(events)
    return {j.name: rule_result(j, judged_groups(j, events)) for j in judges}
