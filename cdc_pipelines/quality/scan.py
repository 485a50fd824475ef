"""A day's quality figures from one pass over its events: every rule's per-event columns in one select,
persisted once, then one aggregation per rule family over that frame.

Before, each rule, the event counts, the activity figures and the GX suite each re-derived their own
columns from the partition (and took their failing examples in jobs of their own): 39 Spark jobs for
the demo day's report, 18 now. Here the event rules share one group-by (examples kept in it),
conservation, volume and lag one each over the same persisted frame, and the rejects one summary for
both rules that read them. Under adaptive execution each shuffle stage is a job of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from cdc_pipelines.quality import activity, conservation, images, keys, timestamps
from cdc_pipelines.quality.images import image_rule
from cdc_pipelines.quality.keys import pk_rule
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.rejects import RejectSummary, summarize_rejects
from cdc_pipelines.quality.result import EventRule, RuleResult, aggregate_rules, key_columns, rule_columns
from cdc_pipelines.quality.timestamps import timestamp_rule

if TYPE_CHECKING:
    from cdc_pipelines.quality.activity import Activity


def event_rules(thresholds: Thresholds, names: Sequence[str]) -> list[EventRule]:
    """The rules among `names` that are judged event by event, with the thresholds applied."""
    ratio = thresholds.max_failure_ratio
    declared = {
        images.RULE: lambda: image_rule(max_failure_ratio=ratio),
        timestamps.RULE: lambda: timestamp_rule(
            max_failure_ratio=ratio,
            now=thresholds.now,
            future_tolerance=thresholds.future_tolerance,
            sync_tolerance=thresholds.sync_tolerance,
        ),
        keys.RULE: lambda: pk_rule(max_failure_ratio=ratio),
    }
    return [declared[n]() for n in names if n in declared]


class DayScan:
    """The partition's events as one persisted frame carrying the columns of `rules` (and of the
    activity figures with `figures`), and its rejects summarized once when a rule needs them.

    Use as a context manager: the frame is unpersisted on exit.
    """

    def __init__(self, partition: Partition, thresholds: Thresholds, rules: Sequence[str], figures: bool = False):
        self.partition = partition
        self.thresholds = thresholds
        self.names = list(rules)
        self.rules = event_rules(thresholds, self.names)
        columns = [c for r in self.rules for c in rule_columns(r)]
        if conservation.RULE in self.names:
            columns += conservation.event_columns()
        if figures:
            columns += ["op", *activity.event_columns(partition.dt)]
        changes = partition.changes
        for rule in self.rules:
            changes = rule.prepare(changes)
        self.events: DataFrame = changes.select(*key_columns(), *columns)
        self.events.persist(StorageLevel.MEMORY_AND_DISK)
        self._rejects: RejectSummary | None = None
        self._volume: list | None = None

    def __enter__(self) -> DayScan:
        return self

    def __exit__(self, *exc) -> None:
        self.events.unpersist()

    @property
    def rejects(self) -> RejectSummary:
        if self._rejects is None:
            self._rejects = summarize_rejects(self.partition.rejects)
        return self._rejects

    def results(self) -> list[RuleResult]:
        """The rules' results in the order asked for."""
        out = aggregate_rules(self.events, self.rules)
        if keys.RULE in out:
            out[keys.RULE] = keys.finish(out[keys.RULE], self.rejects)
        if conservation.RULE in self.names:
            found = conservation.counts_from(self.events, self.rejects)
            out[conservation.RULE] = conservation.conservation_result(
                self.partition, found, self.rejects, self.thresholds
            )
        return [out[n] for n in self.names]

    def volume(self) -> list:
        if self._volume is None:
            self._volume = activity.volume(self.events)
        return self._volume

    def event_counts(self) -> list[dict]:
        """Events by source_topic, table and op (for the report), from the volume aggregate."""
        return activity.event_counts_of(self.volume())

    def activity(self) -> Activity:
        return activity.activity_from(self.events, self.partition.dt, self.volume())
