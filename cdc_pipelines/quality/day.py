"""A day's quality from Arrow batches of its events and rejects: every rule, the counts, volume and lag.

The one place a day is judged, whichever engine runs it. The engine answers two questions of the whole day
with its own group-by (`DayContext`: which event ids repeat; how many distinct input lines stand behind each
topic's events), then hands out batches: `judged_batch` judges one into a `DayTally` (and, asked, the GX
flags), tallies merge, and `day_figures` turns the merged tally into results, event counts and activity.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.quality import conservation, keys
from cdc_pipelines.quality.activity import Activity, Volume, activity_of, event_counts_of, lag_figures
from cdc_pipelines.quality.conservation import TopicCounts, count_events
from cdc_pipelines.quality.images import image_rule
from cdc_pipelines.quality.keys import pk_rule
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.rejects import RejectSummary, summary_of
from cdc_pipelines.quality.result import (
    EventRule,
    RuleResult,
    RuleTally,
    event_table_label,
    flag_column,
    rule_result,
)
from cdc_pipelines.quality.timestamps import timestamp_rule
from cdc_pipelines.runtime.arrow_maps import batch_rows
from cdc_pipelines.runtime.python_workers import no_cycle_collection

RULES = ("image_presence_check", "timestamp_precision_check", "pk_consistency_check", "conservation_check")
EVENT_COLUMNS = (
    "event_id", "source_format", "source_topic", "source_file", "source_line", "op", "raw_op", "db", "db_schema",
    "table_name", "event_time", "event_time_unit", "sync_time", "pk_columns", "before", "after", "column_types",
    "source_types", "ddl", "meta",
)  # fmt: skip
# maps and lists a table's events repeat (its columns' types, its PK names): one dict or list per distinct
# value, which the rules only read
SHARED_COLUMNS = ("column_types", "source_types", "pk_columns")
REJECT_COLUMNS = ("source_topic", "source_file", "source_line", "reason")
# what the engine's group-bys read: the ids that repeat, the lines behind each topic's events
ID_COLUMN = "event_id"
LINE_COLUMNS = ("source_topic", "source_file", "source_line")


def event_rules(thresholds: Thresholds) -> list[EventRule]:
    """The rules judged event by event, in the report's order, with the thresholds applied."""
    ratio = thresholds.max_failure_ratio
    return [image_rule(max_failure_ratio=ratio), timestamp_rule(thresholds), pk_rule(max_failure_ratio=ratio)]


def tables_with_pk(batch: pa.RecordBatch | pa.Table) -> set[tuple]:
    """The tables (`keys.TABLE`) of which some event of `batch` names the PK: one part of `DayContext`,
    unions of batches' sets make the day's. `keys.table_has_pk` is asked once per distinct table, op and
    whether the PK is named, not per event."""
    named = pc.greater(pc.fill_null(pc.list_value_length(batch.column("pk_columns")), 0), 0)
    names = [*keys.TABLE, "op", "pk_columns"]
    kinds = pa.table([*(batch.column(c) for c in keys.TABLE), batch.column("op"), named], names=names)
    kinds = kinds.group_by(names).aggregate([])
    return {tuple(row[c] for c in keys.TABLE) for row in kinds.to_pylist() if keys.table_has_pk(row)}


@dataclass(frozen=True)
class DayContext:
    """Figures of the whole day that an event's verdicts read: the tables that name a PK somewhere in the
    day, and the events of each id that repeats (a day normally has none)."""

    tables_with_pk: frozenset = frozenset()
    repeated_ids: Mapping[str, int] = field(default_factory=dict)

    def events(self, batch: pa.RecordBatch) -> list[dict]:
        """A batch of `EVENT_COLUMNS` as the rules read events (`arrow_maps.batch_rows`), each with its `table`
        label and what the day's figures say of it."""
        events = batch_rows(batch, SHARED_COLUMNS)
        for e in events:
            e["table"] = event_table_label(e)
            e[keys.TABLE_HAS_PK] = tuple(e[c] for c in keys.TABLE) in self.tables_with_pk
            e[keys.EVENT_ID_EVENTS] = self.repeated_ids.get(e["event_id"], 1)
        return events


@dataclass
class DayTally:
    """What a day's events counted, batch by batch: each event rule's tally, the volume and lags, and the
    conservation counts per topic. Tallies of separate batches merge."""

    rules: dict[str, RuleTally] = field(default_factory=dict)
    volume: Volume = field(default_factory=Volume)
    topics: dict[str, TopicCounts] = field(default_factory=dict)

    def merge(self, other: DayTally) -> DayTally:
        for name, tally in other.rules.items():
            self.rules[name] = self.rules[name].merge(tally) if name in self.rules else tally
        self.volume.merge(other.volume)
        for topic, counts in other.topics.items():
            self.topics[topic] = self.topics[topic].merge(counts) if topic in self.topics else counts
        return self


def judged_batch(
    batch: pa.RecordBatch, rules: Sequence[EventRule], context: DayContext, dt: str, flags: bool = False
) -> tuple[DayTally, pa.RecordBatch | None]:
    """One batch of the day's events judged by every rule and counted; with `flags`, also each event's GX flags
    (`flag_schema`) from the same verdicts: an event is judged once whatever is asked of it."""
    with no_cycle_collection():  # many small dicts, no cycles
        events = context.events(batch)
        columns = {"event_id": [e["event_id"] for e in events]} if flags else None
        tally = DayTally(rules={r.name: RuleTally().add(r, events, columns) for r in rules})
        tally.volume.add(events, dt)
        count_events(tally.topics, events)
    return tally, pa.RecordBatch.from_pydict(columns, schema=flag_schema(rules)) if flags else None


def merged(tallies: Iterable[DayTally]) -> DayTally:
    return functools.reduce(DayTally.merge, tallies, DayTally())


def reject_summary(batch: pa.RecordBatch | pa.Table) -> RejectSummary:
    """The summary of a batch of `REJECT_COLUMNS`."""
    return summary_of(batch.to_pylist())


def day_figures(
    partition: Partition,
    tally: DayTally,
    lines: Mapping[str, int],
    rejects: RejectSummary,
    thresholds: Thresholds,
) -> tuple[list[RuleResult], list[dict], Activity]:
    """Every rule's result (in `RULES` order), the event counts and the activity of the day, from its
    merged tally, the distinct input lines behind each topic's events and its rejects' summary."""
    out = {r.name: rule_result(r, tally.rules.get(r.name, RuleTally())) for r in event_rules(thresholds)}
    out[keys.RULE] = keys.finish(out[keys.RULE], rejects)
    found = conservation.counts_of(tally.topics, dict(lines), rejects)
    out[conservation.RULE] = conservation.conservation_result(partition, found, rejects, thresholds)
    volume = tally.volume.rows()
    activity = activity_of(partition.dt, volume, lag_figures(tally.volume.lags))
    return [out[n] for n in RULES], event_counts_of(volume), activity


def flag_names(rules: Sequence[EventRule]) -> list[str]:
    """The GX flags' columns: per rule its sub-checks' and its own."""
    return [c for r in rules for c in (*(flag_column(r.name, n) for n in r.checks), r.name)]


def flag_schema(rules: Sequence[EventRule]) -> pa.Schema:
    return pa.schema([pa.field("event_id", pa.string()), *(pa.field(n, pa.bool_()) for n in flag_names(rules))])
