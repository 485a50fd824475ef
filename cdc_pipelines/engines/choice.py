"""Which engine serves a step: one declared table, read in order, the first row whose case holds wins.

`--engine local|spark|auto` on the commands that read or write the lake and the `cdc.engine` setting
(`CDC_SPARK_CONF`, or the Dagster resource's Spark settings for the quality steps) ask for an engine; `auto`,
the default, is this table. An engine asked for that cannot serve the run fails at once, saying which row
stands in the way. The docs publish the table (`table_rows`). Inside the local engine, the decode and the
encode choose between this process and a pool by their own sizes (`decode.pool`, `encode.in_process`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cdc_pipelines.extract.kafka_source import KafkaSource
from cdc_pipelines.formats import OptionError
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR, SNAPSHOTS_DIR
from cdc_pipelines.runtime.session import MASTER_ENV
from cdc_pipelines.runtime.storage import join, local_path
from cdc_pipelines.snapshots.store import ANOMALIES

LOCAL, SPARK, AUTO = "local", "spark", "auto"
ENGINES = (LOCAL, SPARK)
DECODE, ENCODE, QUALITY, SNAPSHOTS = "decode", "encode", "quality", "snapshots"
STEPS = (DECODE, ENCODE, QUALITY, SNAPSHOTS)
# the engine asked for: local, spark or auto (the engine table, docs/reference/engines.md); --engine overrides it
SETTING = "cdc.engine"


class EngineError(OptionError):
    """An engine asked for cannot serve the run (or no such engine)."""


@dataclass(frozen=True)
class Run:
    """What the table reads of a run: the step, the lake and the output folder, the process's settings and
    those given on the command line alone (`command_conf`); a decode's `inputs`, `format_id` and the Kafka
    source it reads (`kafka`); an encode's or a snapshot's days (`dts`, None: all)."""

    step: str
    lake_root: str
    out: str | None
    conf: Mapping[str, str]
    command_conf: Mapping[str, str] = ()
    inputs: tuple[str, ...] = ()
    format_id: str | None = None
    kafka: KafkaSource | None = None
    dts: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Row:
    """A row of the table: in the case `when` (in words), `engine` serves `steps`, for the reason `why`;
    `only` where the other engine cannot serve that case at all (else `auto` prefers `engine`)."""

    steps: tuple[str, ...]
    when: str
    engine: str
    only: bool
    why: str
    holds: Callable[[Run], bool]


def _master(run: Run) -> bool:
    """`CDC_SPARK_MASTER` set (the user's own ask, a local master too: a test of Spark's behaviour), or a
    cluster's master among the settings (the Dagster resource's always name one, `local[*]` by default)."""
    return bool(os.environ.get(MASTER_ENV)) or not run.conf.get("spark.master", "local").startswith("local")


def _decode_sent_to_spark(run: Run) -> bool:
    """A local extract larger than the in-process decode takes with `cdc.decode.processes` 0
    (`decode.pool.local_engine`)."""
    from cdc_pipelines.decode.pool import local_engine

    if run.kafka is not None:
        return False  # a Kafka day's rows are counted once its offsets are looked up (`decode.kafka_day`)
    return not local_engine(run.inputs, run.lake_root, run.conf)[0]


def _kafka_needs_spark(run: Run) -> bool:
    """Settings of the Kafka source the native client refuses (`extract.kafka_client.check_settings`)."""
    from cdc_pipelines.extract.kafka_client import check_settings

    return run.kafka is not None and check_settings(run.kafka) is not None


def _encode_needs_spark(run: Run) -> bool:
    """Days past the in-process encode's events (`encode.in_process.encodes_in_process`)."""
    from cdc_pipelines.encode.in_process import encodes_in_process

    return not encodes_in_process(run.lake_root, run.out, run.dts, run.conf)


def _snapshots_unwritable(run: Run) -> bool:
    """Whether delta-rs cannot write the snapshot tables of the run's days (`snapshots.local_days.unwritable`)."""
    from cdc_pipelines.snapshots.local_days import unwritable
    from cdc_pipelines.snapshots.run import snapshots_root

    return unwritable(run.lake_root, snapshots_root(run.lake_root, run.out), run.dts or ()) is not None


def _snapshot_days_too_large(run: Run) -> bool:
    """A day past the events the local engine folds in this process (`snapshots.local_days`)."""
    from cdc_pipelines.snapshots.local_days import largest_day, max_events

    return largest_day(run.lake_root, run.dts or ()) > max_events(run.conf)


def _unreadable(run: Run) -> bool:
    """A table of the lake that delta-rs cannot open (a folder name delta-rs takes for a URL, a reader
    feature it lacks)."""
    from deltalake import DeltaTable

    for name in (CHANGES_DIR, REJECTS_DIR, join(SNAPSHOTS_DIR, ANOMALIES)):
        path = join(run.lake_root, name)
        local = delta_rs.local_table_path(path)
        if local is None:
            return True
        if DeltaTable.is_deltatable(local):
            try:
                DeltaTable(local).to_pyarrow_dataset()
            except Exception:  # delta-rs says "unsupported reader features" by several exception types
                return True
    return False


TABLE = (
    Row(STEPS, "`CDC_SPARK_MASTER` is set, or `spark.master` names a cluster", SPARK, False,
        "the run belongs on that master", _master),
    Row(STEPS, "the command sets a `spark.` setting", SPARK, False, "the user is tuning a Spark run",
        lambda run: any(key.startswith("spark.") for key in run.command_conf)),
    Row(STEPS, "the lake or the output folder is not on local disk", SPARK, True,
        "Hadoop's FileSystem reaches hdfs://, s3a://, oss://; delta-rs opens local tables here",
        lambda run: local_path(run.lake_root) is None or (run.out is not None and local_path(run.out) is None)),
    Row((DECODE,), "a day read from Kafka with a setting the native Kafka client (librdkafka) cannot take: a JAAS "
        "login other than PLAIN or SCRAM, a Java client's own setting", SPARK, True,
        "Spark's Kafka source runs Kafka's Java client; the local engine reads a day with confluent-kafka (a day "
        "past `cdc.decode.kafka_in_process_max_messages` offsets, known once they are looked up, still goes to "
        "Spark under auto)", _kafka_needs_spark),
    Row((DECODE,), "inputs off local disk", SPARK, True,
        "the local decode reads local files (every kind: plain lines, `.gz`, Avro containers, CSV tuples)",
        lambda run: run.kafka is None and any(local_path(i) is None for i in run.inputs)),
    Row((DECODE,), "past `cdc.decode.in_process_max_bytes` with `cdc.decode.processes` set to 0", SPARK, True,
        "the setting sends larger extracts to Spark; by default a pool of processes decodes them",
        _decode_sent_to_spark),
    Row((ENCODE,), "the days hold more than `cdc.encode.in_process_max_events` events", SPARK, True,
        "the local encode holds a run's encoded rows in memory", _encode_needs_spark),
    Row((QUALITY, SNAPSHOTS), "a table of the lake is one delta-rs cannot read", SPARK, True,
        "a Delta reader feature delta-rs lacks, or a folder name it takes for a URL", _unreadable),
    Row((SNAPSHOTS,), "a day holds more than `cdc.snapshots.local_max_events` events", SPARK, False,
        "the local engine holds a day in this process; Spark folds it in `mapInArrow` tasks", _snapshot_days_too_large),
    Row((SNAPSHOTS,), "a table the days change is one delta-rs cannot write: Spark created it (deletion vectors, "
        "column mapping), its folder name has `%`, or a column name needs column mapping", SPARK, True,
        "a table keeps the features it was created with; delta-rs 1.6 writes neither feature", _snapshots_unwritable),
    Row(STEPS, "otherwise", LOCAL, False,
        "on one machine the local engine measured faster at every size (docs/performance.md)", lambda run: True),
)  # fmt: skip


def asked(conf: Mapping[str, str], flag: str | None = None) -> str:
    """The engine asked for: `flag` (`--engine`), else the `cdc.engine` setting, else `auto`."""
    engine = flag or conf.get(SETTING) or AUTO
    if engine not in (*ENGINES, AUTO):
        raise EngineError(f"{SETTING} / --engine takes local, spark or auto, not {engine!r}")
    return engine


def choose(run: Run, engine: str = AUTO) -> str:
    """The engine that serves `run`: with `auto` the engine of the first row whose case holds; `spark` serves
    every case; `local` raises `EngineError` where a row that holds says only Spark can serve it."""
    if engine == SPARK:
        return SPARK
    for row in TABLE:
        if run.step not in row.steps or not row.holds(run):
            continue
        if engine == AUTO:
            return row.engine
        if row.only and row.engine != engine:
            raise EngineError(f"--engine {engine} cannot run {run.step} here: {row.when} ({row.why})")
    if engine == AUTO:
        raise EngineError(f"no engine serves the step {run.step!r}")
    return engine


def table_rows() -> list[tuple[str, str, str, str, str]]:
    """(steps, case, engine, only or preferred, why) of every row, in order: the docs' table."""
    return [(", ".join(r.steps), r.when, r.engine, "only" if r.only else "preferred", r.why) for r in TABLE]


def engine_for(run: Run, engine: str, session: Callable[[], Any]):
    """The engine `choose` names for `run`, built: the local engine, or the Spark engine over `session()`."""
    if choose(run, engine) == LOCAL:
        from cdc_pipelines.engines.local import PROCESSES_SETTING, LocalEngine
        from cdc_pipelines.runtime.processes import processes

        return LocalEngine(processes(run.conf, PROCESSES_SETTING))
    from cdc_pipelines.engines.spark import SparkEngine

    return SparkEngine(session())
