"""Several days of every catalog topic at once: what a daily run and a backfill of a range call.

Each topic's `dt=` folders of the range are read and decoded together (one decode per topic,
not one per day), every row's `dt` taken from the folder of its file; the dynamic partition
overwrite then replaces exactly the days written. Counts come back per day, so each day's
conservation is checked on its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.decode.pool import decode_without_spark
from cdc_pipelines.decode.runner import decode_files, write_decoded_by_day
from cdc_pipelines.encode.in_process import encode_in_process, encode_processes, encodes_in_process
from cdc_pipelines.encode.runner import encode_events, encode_report, write_encoded_by_day
from cdc_pipelines.extract.catalog import Topic
from cdc_pipelines.extract.files import InputError, list_input_files
from cdc_pipelines.lake import delta_rs, io
from cdc_pipelines.lake.layout import CHANGES_DIR, TARGETS_DIR
from cdc_pipelines.lake.partition_paths import DT_FOLDER
from cdc_pipelines.model.canonical import MESSAGE_COUNTS
from cdc_pipelines.runtime import storage
from cdc_pipelines.runtime.storage import join


def extract_stats(session: Callable[[], SparkSession], folder: str | Path) -> dict[str, int]:
    """Files and bytes of one raw partition folder (0 and 0 when the folder is missing or empty): a local
    folder walked here, one elsewhere listed by Hadoop in `session()`."""
    local = storage.local_path(folder)
    if local is not None:
        try:
            files = list_input_files([local]) if os.path.isdir(local) else []
        except InputError:  # a folder of hidden files only
            files = []
        return {"files": len(files), "bytes": sum(os.path.getsize(f) for f in files)}
    spark = session()
    sizes = storage.file_sizes(spark, folder) if storage.is_dir(spark, folder) else {}
    return {"files": len(sizes), "bytes": sum(sizes.values())}


def decode_days(
    session: Callable[[], SparkSession],
    topics: Iterable[Topic],
    raw_partition: Callable[[str, str], Path],
    out: str | Path,
    dts: Sequence[str],
    local_conf: Mapping[str, str] | None = None,
) -> tuple[dict[str, dict[str, dict[str, int]]], set[tuple[str, str]]]:
    """Decode the days `dts` of every topic into `out`: counts as {dt: {topic: counts}}, and the
    `(dt, topic)` whose counts the decode committed itself.

    A topic with no files on a day gets zero counts for it: quiet topics are normal. With `local_conf` (the
    settings, where the caller found that nothing asks for Spark: CDC_SPARK_MASTER may name a local
    master), a local topic's day is decoded without Spark where
    `pool.decode_without_spark` applies (each day apart, its counts committed with it), else every
    day of the topic in one Spark decode. `session()` gives the Spark session where one is needed.
    """
    topics = list(topics)
    results = {dt: {t.name: dict.fromkeys(MESSAGE_COUNTS, 0) for t in topics} for dt in dts}
    committed: set[tuple[str, str]] = set()
    for topic in topics:
        if topic.kafka is not None:  # read from Kafka at the offsets its raw asset recorded
            by_day = _kafka_days(session, topic, out, dts, local_conf)
            for dt, counts in by_day.items():  # its counts committed with each day (`kafka_day.write_kafka_day`)
                results[dt][topic.name] = counts
                committed.add((dt, topic.name))
            continue
        present = {dt: raw_partition(topic.name, dt) for dt in dts}
        present = {dt: f for dt, f in present.items() if extract_stats(session, f)["files"]}
        if local_conf is not None:
            for dt, folder in list(present.items()):
                counts = decode_without_spark(topic.format, [str(folder)], topic=topic.name, dt=dt, out=out,
                                              conf=local_conf, options=topic.options,
                                              envelope=topic.envelope, tables=topic.tables)  # fmt: skip
                if counts is not None:
                    results[dt][topic.name] = counts
                    committed.add((dt, topic.name))
                    del present[dt]
        if not present:
            continue
        decoded = decode_files(
            session(), topic.format, list(present.values()), topic=topic.name,
            dt=F.regexp_extract(F.col("source_file"), DT_FOLDER, 1),  # each file's day, by its folder
            options=topic.options, envelope=topic.envelope, tables=topic.tables,
        )  # fmt: skip
        for dt, counts in write_decoded_by_day(decoded, out).items():
            results[dt][topic.name] = counts
    return results, committed


def _kafka_days(
    session: Callable[[], SparkSession], topic: Topic, out: str | Path, dts: Sequence[str],
    local_conf: Mapping[str, str] | None,
) -> dict[str, dict[str, int]]:  # fmt: skip
    """A Kafka topic's days decoded, their counts committed with each: by the native client where nothing asks
    for Spark, else by Spark's Kafka source (`decode.kafka_day`)."""
    from cdc_pipelines.decode.kafka_day import decode_kafka_days, max_messages, needs_spark

    day = dict(topic=topic.name, dts=list(dts), lake_root=out, options=topic.options, tables=topic.tables)
    if local_conf is not None and needs_spark(topic.kafka, out) is None:
        by_day = decode_kafka_days(None, topic.kafka, topic.format, **day, limit=max_messages(local_conf))
        if by_day is not None:
            return by_day
    return decode_kafka_days(session(), topic.kafka, topic.format, **day)


def encode_days(
    session: Callable[[], SparkSession],
    lake_root: str | Path,
    target: str,
    topics: Sequence[str],
    dts: Sequence[str],
    local_conf: Mapping[str, str] | None = None,
) -> dict[str, dict[str, int]]:
    """Re-encode the days `dts` of `topics` into `lake_root/targets/<target>/`; counts per day.

    events = written events + skipped events; `written` counts messages (a DTS Avro event can be two).
    With `local_conf` (the settings, where the caller found that nothing asks for Spark), days of a local
    lake small enough are encoded in this process (`encode.in_process`); `session()` gives the Spark
    session where one is needed.
    """
    zero = {"events": 0, "written": 0, "skipped": 0}
    results = {dt: dict(zero) for dt in dts}
    changes, out = join(lake_root, CHANGES_DIR), target_path(lake_root, target)
    local = local_conf is not None and delta_rs.local_table_path(changes) is not None
    if local and io.table_version(None, changes) is None:
        return results  # a local lake without changes: nothing to encode, no session to find that out
    if local and encodes_in_process(changes, out, dts, local_conf):
        workers = encode_processes(local_conf)
        by_day = encode_in_process(changes, out, target, dts, topics, processes=workers) if topics else {}
    elif not topics or not io.is_table(session(), changes):
        return results
    else:
        events = io.read_canonical(session(), changes)
        events = events.where(F.col("dt").isin(list(dts)) & F.col("source_topic").isin(list(topics)))
        encoded = encode_events(events, target)
        by_day = write_encoded_by_day(encoded, out, target)
    return results | {dt: encode_report(counts) for dt, counts in by_day.items()}


def target_path(lake_root: str | Path, target: str) -> str:
    return join(lake_root, TARGETS_DIR, target)
