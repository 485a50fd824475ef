"""The local engine: a lake on local disk read with delta-rs, the stages' rules run over its Arrow batches
in this process, no JVM.

What it adds to the rules is only what an engine does: it reads the day, answers the day-wide questions
the rules ask with pyarrow's group-by (the ids that repeat, the lines behind each topic's events), hands
the rules their batches and adds up what they counted.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.kafka_offsets import OFFSETS_DIR, days_around, offsets_by_day
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.model.kafka_offsets import find_gaps
from cdc_pipelines.quality import day as quality_day
from cdc_pipelines.quality.day_figures import DayQuality, MissingPartitionError, day_quality_of
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots.report import EXAMPLE_COLUMNS, first_anomalies
from cdc_pipelines.snapshots.store import ANOMALIES

BATCH_ROWS = 16_384  # events judged at a time: a batch's dicts are what the judging holds
OFFSET_COLUMNS = ("kafka_topic", "partition", "start_offset", "end_offset", "scan_end", "first", "last", "messages",
                  "start_ms", "end_ms", "source_topic")  # fmt: skip


def _rows(table: pa.Table | None) -> list[dict]:
    return [] if table is None else table.to_pylist()


def read_record(lake_root: str, dt: str) -> Partition:
    """The counts the day's decode runs recorded, by topic, and the Kafka offsets' gaps around the day."""
    counts = _rows(delta_rs.read_partition(join(lake_root, COUNTS_DIR), "dt", dt, (*MESSAGE_COUNTS, "source_topic")))
    recorded = {r["source_topic"]: {k: int(r[k] or 0) for k in MESSAGE_COUNTS} for r in counts}
    offsets = []
    for day in days_around(dt):
        offsets += [{**r, "dt": day} for r in _rows(delta_rs.read_partition(join(lake_root, OFFSETS_DIR), "dt", day,
                                                                            OFFSET_COLUMNS))]  # fmt: skip
    return Partition(dt=dt, recorded=recorded, kafka_gaps=find_gaps(offsets_by_day(offsets)))


def _read_day(path: str, dt: str, columns) -> pa.Table:
    """The day's rows of the local table at `path` with `columns`; none (as text) where there is no table."""
    table = delta_rs.read_partition(path, "dt", dt, columns)
    return table if table is not None else pa.table({c: pa.array([], pa.string()) for c in columns})


def repeated_ids(events: pa.Table) -> dict[str, int]:
    """The events of each id that more than one event carries."""
    counts = events.group_by(quality_day.ID_COLUMN).aggregate([(quality_day.ID_COLUMN, "count")])
    repeated = counts.filter(pc.greater(counts[f"{quality_day.ID_COLUMN}_count"], 1))
    return dict(zip(repeated[quality_day.ID_COLUMN].to_pylist(), repeated[f"{quality_day.ID_COLUMN}_count"].to_pylist(),
                    strict=True))  # fmt: skip


def distinct_lines(events: pa.Table) -> dict[str, int]:
    """Per topic, the input lines (file and line, both known) behind its events."""
    topic, file, line = quality_day.LINE_COLUMNS
    known = events.select(list(quality_day.LINE_COLUMNS)).filter(pc.and_(pc.is_valid(events[file]),
                                                                         pc.is_valid(events[line])))  # fmt: skip
    lines = known.group_by(list(quality_day.LINE_COLUMNS)).aggregate([])
    per_topic = lines.group_by(topic).aggregate([(file, "count")])
    return dict(zip(per_topic[topic].to_pylist(), per_topic[f"{file}_count"].to_pylist(), strict=True))


class LocalEngine:
    """The local engine's steps (see the module)."""

    name = "local"
    spark = None

    def day_quality(
        self, lake_root: str, dt: str, thresholds: Thresholds, key: dict, report_day: Path | None
    ) -> DayQuality:
        """The day's whole quality (`day_figures.day_quality_of`), the GX suite over a pandas frame of the flags."""
        partition = read_record(lake_root, dt)
        events = _read_day(join(lake_root, CHANGES_DIR), dt, quality_day.EVENT_COLUMNS)
        rejects = _read_day(join(lake_root, REJECTS_DIR), dt, quality_day.REJECT_COLUMNS)
        if not partition.recorded and not events.num_rows and not rejects.num_rows:
            raise MissingPartitionError(f"no changes or rejects for dt={dt} under {lake_root}")
        context = quality_day.DayContext(frozenset(quality_day.tables_with_pk(events)), repeated_ids(events))
        rules = quality_day.event_rules(thresholds)
        batches = events.to_batches(max_chunksize=BATCH_ROWS)
        tally = quality_day.merged(quality_day.tally_batch(b, rules, context, dt) for b in batches)
        summary = quality_day.reject_summary(rejects)
        lines = distinct_lines(events)
        gx = None
        if report_day is not None:
            from cdc_pipelines.quality.expectations import validate_flags  # slow import: only when asked

            flags = pa.Table.from_batches([quality_day.flag_batch(b, rules, context) for b in batches],
                                          schema=quality_day.flag_schema(rules))  # fmt: skip
            gx = validate_flags(lambda sources: sources.add_pandas(name="lake"), flags.to_pandas(),
                                quality_day.flag_names(rules), report_day, thresholds)  # fmt: skip
        return day_quality_of(partition, tally, lines, summary, thresholds, key, gx)

    def snapshot_anomalies(self, root: str, day: str, per_kind: int) -> list[dict]:
        """The day's first anomalies of each kind (`snapshots.report.first_anomalies`)."""
        return first_anomalies(_rows(delta_rs.read_partition(join(root, ANOMALIES), "dt", day, EXAMPLE_COLUMNS)),
                               per_kind)  # fmt: skip
