"""The local engine: a lake on local disk read with delta-rs, the stages' rules run over its Arrow batches
in this process, no JVM.

What it adds to the rules is only what an engine does: it reads the day, answers the day-wide questions
the rules ask with pyarrow's group-by (the ids that repeat, the lines behind each topic's events), hands
the rules their batches and adds up what they counted.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.io import table_version
from cdc_pipelines.lake.kafka_offsets import day_gaps
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import read_counts
from cdc_pipelines.model.schema import CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.quality import day as quality_day
from cdc_pipelines.quality.day_figures import DayQuality, MissingPartitionError, day_quality_of
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.runtime.processes import process_map, workers_for
from cdc_pipelines.runtime.storage import join
from cdc_pipelines.snapshots.report import EXAMPLE_COLUMNS, first_anomalies
from cdc_pipelines.snapshots.store import ANOMALIES

if TYPE_CHECKING:
    from pyspark.sql import types as T

BATCH_ROWS = 16_384  # events judged at a time: a batch's dicts are what the judging holds
# the setting of the processes that run a large day's rules (default: one per core; 1: this process alone)
PROCESSES_SETTING = "cdc.local.processes"
# what the day-wide questions read besides the ids and the lines (`quality.day.tables_with_pk`)
CONTEXT_COLUMNS = ("db", "db_schema", "table_name", "op", "pk_columns")


def read_record(lake_root: str, dt: str, spark=None) -> Partition:
    """The counts the day's decode runs recorded, by topic, and the Kafka offsets' gaps around the day (by
    delta-rs without `spark`)."""
    return Partition(dt, read_counts(spark, lake_root, dt), day_gaps(spark, lake_root, dt))


def _read_day(path: str, dt: str, columns, schema: T.StructType) -> pa.Table:
    """The day's rows of the local table at `path` with `columns`; none, of the table's `schema`'s types, where
    there is no table (a day whose decode read nothing)."""
    table = delta_rs.read_partition(path, "dt", dt, columns)
    return table if table is not None else delta_rs.arrow_schema(schema).empty_table().select(list(columns))


def repeated_ids(events: pa.Table) -> dict[str, int]:
    """The events of each id that more than one event carries."""
    counts = events.group_by(quality_day.ID_COLUMN).aggregate([([], "count_all")])
    repeated = counts.filter(pc.greater(counts["count_all"], 1))
    return dict(zip(repeated[quality_day.ID_COLUMN].to_pylist(), repeated["count_all"].to_pylist(), strict=True))


def distinct_lines(events: pa.Table) -> dict[str, int]:
    """Per topic, the input lines (file and line, both known) behind its events."""
    topic, file, line = quality_day.LINE_COLUMNS
    known = events.select(list(quality_day.LINE_COLUMNS)).filter(pc.and_(pc.is_valid(events[file]),
                                                                         pc.is_valid(events[line])))  # fmt: skip
    lines = known.group_by(list(quality_day.LINE_COLUMNS)).aggregate([])
    per_topic = lines.group_by(topic).aggregate([(file, "count")])
    return dict(zip(per_topic[topic].to_pylist(), per_topic[f"{file}_count"].to_pylist(), strict=True))


@dataclass(frozen=True)
class _Share:
    """One process's part of a day: every `of`-th row group of the day's events, from the `index`-th."""

    changes: str
    version: int | None
    dt: str
    thresholds: Thresholds
    context: quality_day.DayContext
    flags: bool
    index: int
    of: int
    batch_rows: int


def _judge_share(share: _Share) -> tuple[quality_day.DayTally, list[tuple[int, pa.RecordBatch]]]:
    """The share's batches judged into one tally, and (with `flags`) their GX flags by their place in the day."""
    rules = quality_day.event_rules(share.thresholds)
    batches = delta_rs.shared_batches(share.changes, "dt", share.dt, quality_day.EVENT_COLUMNS, (share.index, share.of),
                                      share.batch_rows, share.version)  # fmt: skip
    tallies, flags = [], []
    for place, batch in batches:
        tally, flagged = quality_day.judged_batch(batch, rules, share.context, share.dt, share.flags)
        tallies.append(tally)
        if flagged is not None:
            flags.append((place, flagged))
    return quality_day.merged(tallies), flags


def _importing(module: str) -> threading.Thread:
    """`module` imported in a thread of its own, started (what a failed import raises comes again on use)."""

    def load() -> None:
        with contextlib.suppress(Exception):
            importlib.import_module(module)

    thread = threading.Thread(target=load, name=f"import {module}", daemon=True)
    thread.start()
    return thread


class LocalEngine:
    """The local engine's steps (see the module); a day of `processes.POOL_MIN_ROWS` events or more is judged by
    `processes` processes, each every n-th row group of it."""

    name = "local"
    spark = None

    def __init__(self, processes: int = 1):
        self.processes = max(1, processes)

    def day_quality(
        self, lake_root: str, dt: str, thresholds: Thresholds, key: dict, report_day: Path | None
    ) -> DayQuality:
        """The day's whole quality (`day_figures.day_quality_of`), the GX suite over a pandas frame of the flags.
        The day-wide questions are answered from a read of the few columns they need; the events are read
        a batch at a time."""
        partition = read_record(lake_root, dt)
        changes = join(lake_root, CHANGES_DIR)
        version = table_version(None, changes)  # every process reads this version
        events = _read_day(
            changes, dt, (quality_day.ID_COLUMN, *quality_day.LINE_COLUMNS, *CONTEXT_COLUMNS), CANONICAL_SCHEMA
        )
        rejects = _read_day(join(lake_root, REJECTS_DIR), dt, quality_day.REJECT_COLUMNS, REJECTS_SCHEMA)
        if not partition.recorded and not events.num_rows and not rejects.num_rows:
            raise MissingPartitionError(f"no changes or rejects for dt={dt} under {lake_root}")
        context = quality_day.DayContext(frozenset(quality_day.tables_with_pk(events)), repeated_ids(events))
        workers = workers_for(events.num_rows, self.processes, BATCH_ROWS)
        shares = [_Share(changes, version, dt, thresholds, context, report_day is not None, k, workers, BATCH_ROWS)
                  for k in range(workers)]  # fmt: skip
        # GX's import (2-3 s) runs in a thread while the processes judge the day: this process only waits there
        gx_import = _importing("great_expectations") if report_day is not None and workers > 1 else None
        with process_map(workers) as run:
            judged = run(_judge_share, shares)
        tally = quality_day.merged(t for t, _ in judged)
        summary = quality_day.reject_summary(rejects)
        gx = None
        if report_day is not None:
            from cdc_pipelines.quality.expectations import validate_flags  # slow import: only when asked

            if gx_import is not None:
                gx_import.join()
            rules = quality_day.event_rules(thresholds)
            flags = pa.Table.from_batches([b for _, b in sorted((f for _, share in judged for f in share),
                                                                key=lambda f: f[0])],
                                          schema=quality_day.flag_schema(rules))  # fmt: skip
            gx = validate_flags(lambda sources: sources.add_pandas(name="lake"), flags.to_pandas(),
                                quality_day.flag_names(rules), report_day, thresholds)  # fmt: skip
        return day_quality_of(partition, tally, distinct_lines(events), summary, thresholds, key, gx)

    def snapshot_anomalies(self, root: str, day: str, per_kind: int) -> list[dict]:
        """The day's first anomalies of each kind (`snapshots.report.first_anomalies`)."""
        anomalies = delta_rs.read_partition(join(root, ANOMALIES), "dt", day, EXAMPLE_COLUMNS)
        return first_anomalies([] if anomalies is None else anomalies.to_pylist(), per_kind)
