"""The day's rejects in one aggregate, shared by conservation (counts, top reasons, examples) and split-update
pairing (the orphan before halves the decoder rejected).

Counts by (source_topic, reason) with each group's first MAX_EXAMPLES lines: the first examples overall,
or of any set of reasons, are among those, so one Spark job answers every question the rules ask of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from cdc_pipelines.quality.result import MAX_EXAMPLES, null_first

ORDER = ("source_topic", "source_file", "source_line")


@dataclass(frozen=True)
class RejectGroup:
    source_topic: str
    reason: str
    count: int
    first: tuple[tuple[str, str, int], ...]  # (source_topic, source_file, source_line), in ORDER


@dataclass(frozen=True)
class RejectSummary:
    groups: tuple[RejectGroup, ...]

    def _having(self, contains: str) -> list[RejectGroup]:
        return [g for g in self.groups if not contains or (g.reason is not None and contains in g.reason)]

    def by_topic(self, contains: str = "") -> dict[str, int]:
        """Rejects per topic (only reasons containing `contains`)."""
        out: dict[str, int] = {}
        for g in self._having(contains):
            out[g.source_topic] = out.get(g.source_topic, 0) + g.count
        return out

    def reasons(self, top: int) -> list[dict]:
        """The `top` most frequent reasons as {reason, count}, most frequent first, then by reason."""
        counts: dict[str, int] = {}
        for g in self.groups:
            counts[g.reason] = counts.get(g.reason, 0) + g.count
        return [
            {"reason": r, "count": n} for r, n in sorted(counts.items(), key=lambda x: (-x[1], *null_first(x[0])))[:top]
        ]

    def examples(self, limit: int = MAX_EXAMPLES, contains: str = "") -> list[dict]:
        """The first `limit` rejected lines by (topic, file, line), as {source_topic, source_file,
        source_line, reason}."""
        lines = [(line, g.reason) for g in self._having(contains) for line in g.first]
        lines.sort(key=lambda x: (null_first(*x[0]), null_first(x[1])))  # a line rejected twice: by reason
        return [
            {"source_topic": t, "source_file": f, "source_line": n, "reason": reason}
            for (t, f, n), reason in lines[: max(limit, 0)]
        ]


def summarize_rejects(rejects: DataFrame) -> RejectSummary:
    """One group-by over the rejects (one Spark job)."""
    line = F.struct(*ORDER)
    rows = (
        rejects.groupBy("source_topic", "reason")
        .agg(F.count(F.lit(1)).alias("n"), F.min_by(line, line, MAX_EXAMPLES).alias("first"))
        .collect()
    )
    return RejectSummary(
        tuple(RejectGroup(r.source_topic, r.reason, r.n, tuple(tuple(x) for x in r["first"] or ())) for r in rows)
    )


def summary_of(rejects: list[dict]) -> RejectSummary:
    """`summarize_rejects` over rejects as dicts (in Python, for a day judged without a JVM)."""
    groups: dict[tuple, list] = {}
    for r in rejects:
        groups.setdefault((r["source_topic"], r["reason"]), []).append(tuple(r[c] for c in ORDER))
    return RejectSummary(
        tuple(
            RejectGroup(t, reason, len(lines), tuple(sorted(lines, key=lambda x: null_first(*x))[:MAX_EXAMPLES]))
            for (t, reason), lines in groups.items()
        )
    )
