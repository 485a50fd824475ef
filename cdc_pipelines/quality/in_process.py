"""A small day of a local lake judged in this process: no JVM for the quality of a quiet day.

A new Spark process spends 15-20 s on its start and first jobs however few events a day holds, where
reading 20,000 events with delta-rs takes 1.7 s and judging them in Python 0.4 s. So a day of at most
`MAX_EVENTS_SETTING` events, on a lake and a report folder on local disk, is read with delta-rs and judged
by each rule's Python form (`EventJudge`, beside the Spark form in `images`, `timestamps`, `keys`), its
counts, rejects and activity by the Python twins of their aggregates, and the GX suite validates the same
flags as a pandas frame. The rules are thus written twice, against the "no second implementation" of
docs/architecture.md (decision 7): what makes them one rule is `tests/quality/test_in_process.py`, which
holds both forms to the same figures, digit for digit, on events failing every sub-check, every format's samples and the
peers' files. An event the Python form cannot judge as Spark does (`NeedsSpark`) sends the day to Spark.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Row, SparkSession

from cdc_pipelines.formats import OptionError
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.io import latest_commit
from cdc_pipelines.lake.kafka_offsets import OFFSETS_DIR, days_around, offsets_by_day
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.model.kafka_offsets import find_gaps
from cdc_pipelines.quality import conservation, keys
from cdc_pipelines.quality.activity import Activity, activity_of, event_counts_of, lag_figures, volume_order
from cdc_pipelines.quality.day_figures import SOURCE_TABLES, DayQuality, figures_key_of
from cdc_pipelines.quality.images import image_judge
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.rejects import summary_of
from cdc_pipelines.quality.result import (
    EventJudge,
    NeedsSpark,
    RuleResult,
    event_table_label,
    flag_column,
    judge_rules,
)
from cdc_pipelines.quality.runner import RULES, MissingPartitionError
from cdc_pipelines.quality.timestamps import timestamp_judge
from cdc_pipelines.runtime.storage import join, local_path
from cdc_pipelines.snapshots.report import snapshot_report_local

# the setting (`--conf` or CDC_SPARK_CONF) of the most events a day judged in process may hold; 0 turns it off.
# A bound on memory more than on time (docs/benchmarks-history.md, *quality judged without a JVM*): 100,000
# canal events judged here took 8.0 s and 1.07 GB of Python objects against the 27.4 s of a new Spark
# process; 20,000 took 3.3 s against 23.7 s
MAX_EVENTS_SETTING = "cdc.quality.in_process_max_events"
DEFAULT_MAX_EVENTS = 100_000
EVENT_COLUMNS = (
    "event_id", "source_format", "source_topic", "source_file", "source_line", "op", "raw_op", "db", "db_schema",
    "table_name", "event_time", "event_time_unit", "sync_time", "pk_columns", "before", "after", "column_types",
    "source_types", "ddl", "meta",
)  # fmt: skip
MAPS = ("before", "after", "column_types", "source_types", "meta")
TIMES = ("event_time", "sync_time")
_DAY_US, _HOUR_US = 86_400_000_000, 3_600_000_000
T = TypeVar("T")


def judged_in_process(lake_root: str, dt: str, out: str | None, conf: Mapping[str, str], spark_asked: bool) -> bool:
    """Whether `dt` of `lake_root` is judged in this process: nothing asks for Spark (`spark_asked`; the CLI's
    `runtime.session.asks_for_spark`), the session's time zone is UTC (the Python forms read hours and days
    in UTC), the lake and the report folder are on local disk (delta-rs opens the tables), and the day
    holds at most `MAX_EVENTS_SETTING` (in `conf`) events and rejects by the files' statistics."""
    text = conf.get(MAX_EVENTS_SETTING, str(DEFAULT_MAX_EVENTS))
    if not str(text).isdigit():
        raise OptionError(f"{MAX_EVENTS_SETTING} takes a whole number of events, not {text!r}")
    limit = int(text)
    utc = conf.get("spark.sql.session.timeZone", "UTC") in ("UTC", "Etc/UTC", "Z", "+00:00")
    if limit <= 0 or spark_asked or not utc or (out is not None and local_path(out) is None):
        return False
    if delta_rs.local_table_path(join(lake_root, REJECTS_DIR)) is None:
        return False
    events = delta_rs.partition_rows(join(lake_root, CHANGES_DIR), "dt", dt)  # None: no local table
    rejects = delta_rs.partition_rows(join(lake_root, REJECTS_DIR), "dt", dt) or 0
    return events is not None and events + rejects <= limit


def in_process_or_spark(run: Callable[[SparkSession | None], T], session: Callable[[], SparkSession], local: bool) -> T:
    """`run(None)` (judged in this process) where `local`, else, or where an event needs Spark
    (`NeedsSpark`, said on stderr), `run` with the session `session` gives."""
    if local:
        try:
            return run(None)
        except NeedsSpark as why:
            print(f"quality: judged with Spark ({why})", file=sys.stderr)
    return run(session())


def figures_key(lake_root: str, thresholds: Thresholds, great_expectations: bool) -> dict:
    """`day_figures.figures_key` of a local lake: its tables' latest versions from their logs' names."""
    versions = {}
    for name in SOURCE_TABLES:
        log = os.path.join(local_path(join(lake_root, name)), "_delta_log")
        versions[name] = latest_commit(os.listdir(log)) if os.path.isdir(log) else None
    return figures_key_of(versions, thresholds, great_expectations)


def day_quality(lake_root: str, dt: str, thresholds: Thresholds, key: dict, report_day: Path | None) -> DayQuality:
    """`day_figures.compute_day_quality` judged in this process, the GX suite (with `report_day`) over a
    pandas frame of the same flags (a table written with a Delta feature delta-rs cannot read, such as
    deletion vectors, is `NeedsSpark`)."""
    from deltalake.exceptions import DeltaProtocolError

    try:
        partition, events, rejects = read_partition(lake_root, dt)
    except DeltaProtocolError as error:
        raise NeedsSpark(f"delta-rs cannot read the day: {error}") from None
    judges = event_judges(thresholds)
    results, counts, activity = judge_day(partition, events, rejects, thresholds, judges)
    gx = None
    if report_day is not None:
        from cdc_pipelines.quality.expectations import run_expectations_on_rows  # slow import: only when asked

        gx = run_expectations_on_rows(flag_rows(events, judges), flag_columns(judges), report_day, thresholds)
    return DayQuality(dt=dt, key=key, results=results, event_counts=counts, activity=activity, gx=gx)


def snapshot_section(root: str, dt: str) -> dict | None:
    """`snapshots.report.snapshot_report_local`, a table delta-rs cannot read being `NeedsSpark`."""
    from deltalake.exceptions import DeltaProtocolError

    try:
        return snapshot_report_local(root, dt)
    except DeltaProtocolError as error:
        raise NeedsSpark(f"delta-rs cannot read the day's anomalies: {error}") from None


def flag_columns(judges: list[EventJudge]) -> list[str]:
    """`expectations.flag_frame`'s columns: the event id, then per rule its sub-checks' and its own."""
    return ["event_id", *(c for j in judges for c in (*(flag_column(j.name, n) for n in j.checks), j.name))]


def flag_rows(events: list[dict], judges: list[EventJudge]) -> list[dict]:
    """`expectations.flag_frame`'s rows from the judges' verdicts (run after `judge_rules` prepared the
    events): per rule a column per sub-check, null where it does not apply, else whether the event fails
    it, and the rule's own column (null where no sub-check applies, else whether any fails)."""
    rows = []
    for event in events:
        row = {"event_id": event["event_id"]}
        for judge in judges:
            verdicts, _ = judge.verdicts(event)
            any_applies = any_fails = False
            for name, (applies, fails, _) in zip(judge.checks, verdicts, strict=True):
                failed = bool(applies and fails)
                row[flag_column(judge.name, name)] = failed if applies else None
                any_applies, any_fails = any_applies or bool(applies), any_fails or failed
            row[judge.name] = any_fails if any_applies else None
        rows.append(row)
    return rows


def _rows(table: pa.Table | None) -> list[dict]:
    return [] if table is None else table.to_pylist()


def read_events(lake_root: str, dt: str) -> list[dict]:
    """The day's events as dicts: maps as dicts, times as epoch microseconds, each with its `table` label."""
    data = delta_rs.read_partition(join(lake_root, CHANGES_DIR), "dt", dt, EVENT_COLUMNS)
    if data is None:
        return []
    for name in TIMES:
        data = data.set_column(data.schema.get_field_index(name), name, pc.cast(data[name], pa.int64()))
    events = data.to_pylist()
    for e in events:
        for name in MAPS:
            if e[name] is not None:
                e[name] = dict(e[name])
        e["table"] = event_table_label(e)
    return events


def read_partition(lake_root: str, dt: str) -> tuple[Partition, list[dict], list[dict]]:
    """The day as `runner.load_partition` gives it (recorded counts, Kafka gaps), with its events and
    rejects as dicts. A day with neither rows nor recorded counts was never decoded: that raises."""
    counts = _rows(delta_rs.read_partition(join(lake_root, COUNTS_DIR), "dt", dt, (*MESSAGE_COUNTS, "source_topic")))
    recorded = {r["source_topic"]: {k: int(r[k] or 0) for k in MESSAGE_COUNTS} for r in counts}
    events = read_events(lake_root, dt)
    rejects = _rows(delta_rs.read_partition(join(lake_root, REJECTS_DIR), "dt", dt,
                                            ("source_topic", "source_file", "source_line", "reason")))  # fmt: skip
    if not recorded and not events and not rejects:
        raise MissingPartitionError(f"no changes or rejects for dt={dt} under {lake_root}")
    offsets = []
    for day in days_around(dt):
        offsets += [{**r, "dt": day} for r in _rows(delta_rs.read_partition(
            join(lake_root, OFFSETS_DIR), "dt", day, ("kafka_topic", "partition", "start_offset", "end_offset",
                                                      "scan_end", "first", "last", "messages", "start_ms", "end_ms",
                                                      "source_topic")))]  # fmt: skip
    gaps = find_gaps(offsets_by_day(offsets))
    return Partition(dt=dt, changes=None, rejects=None, recorded=recorded, kafka_gaps=gaps), events, rejects


def event_judges(thresholds: Thresholds) -> list[EventJudge]:
    """The event rules' Python forms, in `expectations.EVENT_RULES` order."""
    ratio = thresholds.max_failure_ratio
    return [image_judge(max_failure_ratio=ratio), timestamp_judge(thresholds), keys.pk_judge(max_failure_ratio=ratio)]


def judge_day(
    partition: Partition,
    events: list[dict],
    rejects: list[dict],
    thresholds: Thresholds,
    judges: list[EventJudge] | None = None,
) -> tuple[list[RuleResult], list[dict], Activity]:
    """Every rule, the event counts and the activity of a day, as `DayScan` gives them, in Python."""
    out = judge_rules(events, judges or event_judges(thresholds))
    summary = summary_of(rejects)
    out[keys.RULE] = keys.finish(out[keys.RULE], summary)
    found = conservation.counts_of(events, summary)
    out[conservation.RULE] = conservation.conservation_result(partition, found, summary, thresholds)
    volume, lags = _volume_and_lags(events, partition.dt)
    return [out[n] for n in RULES], event_counts_of(volume), activity_of(partition.dt, volume, lag_figures(lags))


def _volume_and_lags(events: list[dict], dt: str) -> tuple[list[Row], dict[str, list[float]]]:
    """`activity.volume`'s rows (events by topic, table, op and hour of the day) and each topic's lags."""
    day = (date.fromisoformat(dt) - date(1970, 1, 1)).days
    counts: dict[tuple, int] = {}
    lags: dict[str, list[float]] = {}
    for e in events:
        event_us, sync_us = e["event_time"], e["sync_time"]
        hour = None
        if event_us is not None and event_us // _DAY_US == day:
            hour = event_us // _HOUR_US % 24
        key = (e["source_topic"], e["table"], e["op"], hour)
        counts[key] = counts.get(key, 0) + 1
        if event_us is not None and sync_us is not None:
            lags.setdefault(e["source_topic"], []).append((sync_us - event_us) / 1_000_000.0)
    volume = [Row(source_topic=t, table=table, op=op, hour=h, count=n) for (t, table, op, h), n in counts.items()]
    return sorted(volume, key=volume_order), lags
