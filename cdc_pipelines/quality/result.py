"""The result object every rule returns, and the one aggregation that fills it.

A rule marks each event with sub-checks (does it apply, does it fail, why); `evaluate` turns those
marks into counts with a single group-by per (source_topic, table) and fetches at most a handful of
failing examples, so nothing but aggregates and examples ever reaches the driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pyspark.sql import Column, DataFrame
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


def evaluate(
    df: DataFrame,
    rule: str,
    checks: Mapping[str, SubCheck],
    *,
    threshold: float = 0.0,
    info: Mapping[str, Column] | None = None,
) -> RuleResult:
    """Count `checks` (and boolean `info` flags) over `df` by topic and table; pick failing examples.

    A row counts as checked when any sub-check applies and as failed when any applicable one fails;
    its reason is the first failing sub-check's, in the order given.
    """
    info = dict(info or {})
    flags = {}
    for name, check in checks.items():
        applies = F.coalesce(check.applies, F.lit(False))
        flags[f"a_{name}"] = applies
        flags[f"f_{name}"] = applies & F.coalesce(check.fails, F.lit(False))
    reason = F.coalesce(*[F.when(flags[f"f_{n}"], c.reason) for n, c in checks.items()], F.lit(None))
    marked = df.select(
        "event_id",
        "source_topic",
        "source_file",
        "source_line",
        table_label().alias("table"),
        *[col.alias(name) for name, col in flags.items()],
        *[F.coalesce(col, F.lit(False)).alias(f"i_{name}") for name, col in info.items()],
        reason.alias("reason"),
    )
    any_applies = F.lit(False)
    for name in checks:
        any_applies = any_applies | F.col(f"a_{name}")
    counted = [*flags, *[f"i_{n}" for n in info]]
    rows = (
        marked.groupBy("source_topic", "table")
        .agg(
            F.count(F.when(any_applies, 1)).alias("checked"),
            F.count("reason").alias("failed"),
            *[F.count(F.when(F.col(c), 1)).alias(c) for c in counted],
        )
        .orderBy("source_topic", "table")
        .collect()
    )
    groups = [r.asDict() for r in rows]
    total = {c: sum(g[c] for g in groups) for c in ("checked", "failed", *counted)}
    examples = []
    if total["failed"]:
        examples = [
            {"id": r.event_id, "reason": r.reason, "source_topic": r.source_topic, "table": r.table}
            for r in marked.where(F.col("reason").isNotNull())
            .orderBy("source_topic", "source_file", "source_line", "event_id")
            .limit(MAX_EXAMPLES)
            .collect()
        ]
    ratio = total["failed"] / total["checked"] if total["checked"] else 0.0
    return RuleResult(
        rule=rule,
        checked=total["checked"],
        failed=total["failed"],
        passed=ratio <= threshold,
        threshold=threshold,
        checks={n: {"checked": total[f"a_{n}"], "failed": total[f"f_{n}"]} for n in checks},
        info={n: total[f"i_{n}"] for n in info},
        groups=[
            {
                "source_topic": g["source_topic"],
                "table": g["table"],
                "checked": g["checked"],
                "failed": g["failed"],
                **{n: g[f"i_{n}"] for n in info},
            }
            for g in groups
        ],
        examples=examples,
    )
