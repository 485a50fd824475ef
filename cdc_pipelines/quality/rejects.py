"""The day's rejects in one summary, shared by conservation (counts, top reasons, examples) and split-update
pairing (the orphan before halves the decoder rejected).

Counts by (source_topic, reason) with each group's first MAX_EXAMPLES lines: the first examples overall,
or of any set of reasons, are among those, so one summary answers every question the rules ask of them.
Summaries of separate batches of rejects merge (`merge`).
"""

from __future__ import annotations

from dataclasses import dataclass

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
        ordered = sorted(counts.items(), key=lambda x: (-x[1], *null_first(x[0])))
        return [{"reason": r, "count": n} for r, n in ordered[:top]]

    def examples(self, limit: int = MAX_EXAMPLES, contains: str = "") -> list[dict]:
        """The first `limit` rejected lines by (topic, file, line), as a rule's failing examples: {id
        (`file:line`), reason, source_topic}."""
        lines = [(line, g.reason) for g in self._having(contains) for line in g.first]
        lines.sort(key=lambda x: (null_first(*x[0]), null_first(x[1])))  # a line rejected twice: by reason
        return [{"id": f"{f}:{n}", "reason": reason, "source_topic": t} for (t, f, n), reason in lines[: max(limit, 0)]]


def summary_of(rejects) -> RejectSummary:
    """The summary of `rejects` (dicts with source_topic, source_file, source_line and reason)."""
    groups: dict[tuple, list] = {}
    for r in rejects:
        groups.setdefault((r["source_topic"], r["reason"]), []).append(tuple(r[c] for c in ORDER))
    return RejectSummary(
        tuple(RejectGroup(t, reason, len(lines), _first(lines)) for (t, reason), lines in groups.items())
    )


def _first(lines) -> tuple:
    return tuple(sorted(lines, key=lambda x: null_first(*x))[:MAX_EXAMPLES])


def merge(summaries) -> RejectSummary:
    """One summary of the rejects `summaries` counted apart."""
    groups: dict[tuple, RejectGroup] = {}
    for summary in summaries:
        for g in summary.groups:
            key = (g.source_topic, g.reason)
            held = groups.get(key)
            groups[key] = g if held is None else RejectGroup(g.source_topic, g.reason, held.count + g.count,
                                                             _first(held.first + g.first))  # fmt: skip
    return RejectSummary(tuple(groups.values()))
