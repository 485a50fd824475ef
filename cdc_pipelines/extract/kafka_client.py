"""A day of a Kafka topic looked up and read by the native client (confluent-kafka, librdkafka): no JVM.

The local engine's reader: the same planned offsets (`kafka_plan`, through `NativeLookup`), read by assigned
partitions from each range's start to its scan end (no consumer group, nothing committed), into the Arrow
columns `kafka_lines.kcat_line` turns into lines, as Spark's reader does. The project's Kafka settings are
Java client names (Spark's Kafka source takes them); `client_settings` maps them to librdkafka's, and refuses
(`UnsupportedSetting`) those librdkafka cannot take, such as a JAAS login other than PLAIN or SCRAM: the engine
table then leaves the day to Spark.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa

from cdc_pipelines.extract.kafka_days import DayBounds
from cdc_pipelines.extract.kafka_lines import RECORD_SCHEMA
from cdc_pipelines.extract.kafka_plan import PartitionState, PlannedRange, reading
from cdc_pipelines.extract.kafka_source import KafkaSource, KafkaSourceError

# librdkafka's own log lines (each failed connect among them) go to logging, unseen where nothing handles them:
# what a failed call needs is in its error
_LOG = logging.getLogger(__name__)
_LOG.addHandler(logging.NullHandler())
# JAAS login modules whose username and password librdkafka takes as `sasl.username` / `sasl.password`
_LOGINS = ("org.apache.kafka.common.security.plain.PlainLoginModule",
           "org.apache.kafka.common.security.scram.ScramLoginModule")  # fmt: skip
_JAAS = re.compile(r"\s*(?P<module>[\w.$]+)\s+(?:required|requisite|sufficient|optional)(?P<options>.*?);?\s*$", re.S)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+))')
# Kafka's timestamp type ids (what Spark's source gives) of librdkafka's (0 none, 1 create, 2 log append)
_TIMESTAMP_TYPE = {1: 0, 2: 1}
_POLL_S = 0.5


class UnsupportedSetting(KafkaSourceError):
    """A Kafka setting the native client cannot take: the day is Spark's to read."""


def _jaas_login(value: str) -> dict[str, str]:
    """`sasl.username` and `sasl.password` of a PLAIN or SCRAM JAAS config."""
    found = _JAAS.fullmatch(value)
    if found is None or found["module"] not in _LOGINS:
        module = found["module"] if found else "an unreadable JAAS config"
        raise UnsupportedSetting(f"kafka.sasl.jaas.config: the native Kafka client takes PLAIN and SCRAM logins, "
                                 f"not {module} (use --engine spark)")  # fmt: skip
    options = {m[1]: (m[2].replace('\\"', '"') if m[2] is not None else m[3])
               for m in _JAAS_OPTION.finditer(found["options"])}  # fmt: skip
    if "username" not in options or "password" not in options:
        raise UnsupportedSetting("kafka.sasl.jaas.config: a PLAIN or SCRAM login needs a username and a password")
    return {"sasl.username": options["username"], "sasl.password": options["password"]}


def client_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """librdkafka's settings of the consumer settings `settings` (Java client names, `KafkaSource.consumer_settings`).

    `sasl.jaas.config` becomes `sasl.username` / `sasl.password`, an empty `ssl.endpoint.identification.algorithm`
    (Java's "no check") `none`; every other setting keeps its name, which librdkafka shares for the common ones
    (`bootstrap.servers`, `security.protocol`, `sasl.mechanism`, `client.id`, ...). A name it does not know is
    refused when the consumer is made (`check_settings`)."""
    out = {}
    for key, value in settings.items():
        if key == "sasl.jaas.config":
            out |= _jaas_login(value)
        elif key == "ssl.endpoint.identification.algorithm" and not value:
            out[key] = "none"
        else:
            out[key] = value
    return out


def _consumer_conf(source: KafkaSource, errors: list) -> dict:
    """The consumer's whole configuration: the source's, read uncommitted as Java's consumer (and Spark's) does,
    no group offsets, an offset out of range an error (never a silent reset)."""
    return {
        "group.id": "cdc-pipelines", "enable.auto.commit": False, "enable.auto.offset.store": False,
        "auto.offset.reset": "error", "enable.partition.eof": True, "isolation.level": "read_uncommitted",
        "allow.auto.create.topics": False,
        **client_settings(source.consumer_settings()),
        "error_cb": errors.append, "logger": _LOG,
    }  # fmt: skip


def check_settings(source: KafkaSource) -> str | None:
    """Why the native client cannot take the source's settings, else None (a consumer is made and closed, no
    connection awaited). A `${NAME}` whose variable is not set is no verdict: the read reports it."""
    from confluent_kafka import Consumer, KafkaException

    try:
        conf = _consumer_conf(source, [])
    except UnsupportedSetting as exc:
        return str(exc)
    except KafkaSourceError:
        return None
    try:
        Consumer(conf).close()
    except KafkaException as exc:
        return f"the native Kafka client refuses a setting: {exc.args[0].str()}"
    return None


def _what_failed(codes: set[str]) -> str:
    if any("AUTHENTICATION" in c or "SASL" in c or "SSL" in c for c in codes):
        return "authentication failed"
    if any("AUTHORIZATION" in c for c in codes):
        return "not authorized"
    if any(c in ("_TRANSPORT", "_TIMED_OUT", "_ALL_BROKERS_DOWN", "_RESOLVE") for c in codes):
        return "broker unreachable (timed out)"
    return "lookup failed"


@dataclass
class _Client:
    """A consumer and the errors librdkafka reported beside the calls' own (a failed login comes as one)."""

    source: KafkaSource
    consumer: object
    errors: list

    def fail(self, what: str | None, exc: Exception | None = None) -> KafkaSourceError:
        """The source's error for a failed call: its cause and the errors reported, what failed read from both."""
        reported = [*([exc.args[0]] if exc is not None and exc.args else []), *self.errors]
        codes = {e.name() for e in reported if hasattr(e, "name")}
        auth = [e for e in reported if hasattr(e, "name") and "AUTHENTICATION" in e.name()]
        cause = "; ".join(dict.fromkeys(f"{e.name()}: {e.str()}" if hasattr(e, "name") else str(e)
                                        for e in (auth or reported)))  # fmt: skip
        return self.source.error(what or _what_failed(codes), cause or "no answer")

    def call(self, step, *args, **kwargs):
        from confluent_kafka import KafkaException

        try:
            return step(*args, **kwargs)
        except KafkaException as exc:
            raise self.fail(None, exc) from None

    def topic_partitions(self) -> list[int]:
        """The topic's partitions; a failed login is told before the timeout ends where librdkafka reports one."""
        from confluent_kafka import KafkaException

        deadline = time.monotonic() + self.source.timeout_ms / 1000
        while True:
            try:
                metadata = self.consumer.list_topics(timeout=min(_POLL_S * 2, max(0.1, deadline - time.monotonic())))
                break
            except KafkaException as exc:
                self.consumer.poll(0)  # serves `error_cb`: a failed login is reported there
                if time.monotonic() >= deadline or any("AUTHENTICATION" in e.name() for e in self.errors):
                    raise self.fail(None, exc) from None
        topic = metadata.topics.get(self.source.topic)
        if topic is None or topic.error is not None:
            raise KafkaSourceError(f"kafka topic {self.source.topic} at {self.source.bootstrap_servers}: "
                                   "topic does not exist")  # fmt: skip
        return sorted(topic.partitions)


@contextmanager
def _client(source: KafkaSource) -> Iterator[_Client]:
    from confluent_kafka import Consumer, KafkaException

    errors: list = []
    try:
        consumer = Consumer(_consumer_conf(source, errors))
    except KafkaException as exc:
        raise source.error("cannot create a consumer", exc.args[0].str()) from None
    try:
        yield _Client(source, consumer, errors)
    finally:
        consumer.close()


@dataclass(frozen=True)
class NativeLookup:
    """The `kafka_plan.OffsetLookup` of the native client."""

    source: KafkaSource

    def partition_states(self, timestamps: list[int]) -> list[PartitionState]:
        from confluent_kafka import TopicPartition

        timeout = self.source.timeout_ms / 1000
        with _client(self.source) as client:
            partitions = client.topic_partitions()
            marks = {p: client.call(client.consumer.get_watermark_offsets, TopicPartition(self.source.topic, p),
                                    timeout=timeout, cached=False) for p in partitions}  # fmt: skip
            at: dict[int, dict[int, int | None]] = {p: {} for p in partitions}
            for ts in timestamps:
                query = [TopicPartition(self.source.topic, p, ts) for p in partitions]
                for found in client.call(client.consumer.offsets_for_times, query, timeout=timeout):
                    if found.error is not None:
                        raise client.fail(None, Exception(found.error))
                    at[found.partition][ts] = None if found.offset < 0 else found.offset
        return [PartitionState(p, marks[p][0], marks[p][1], at[p]) for p in partitions]

    def newest_timestamps(self, states: list[PartitionState]) -> dict[int, int | None]:
        out: dict[int, int | None] = {s.partition: None for s in states}
        wanted = [PlannedRange(s.partition, s.high_watermark - 1, s.high_watermark, s.high_watermark)
                  for s in states if s.high_watermark > s.log_start]  # fmt: skip
        for batch in _batches(self.source, wanted):
            for p, ts in zip(batch.column("partition").to_pylist(), batch.column("ts").to_pylist(), strict=True):
                out[p] = max(out[p] or 0, ts)
        return out


def _batches(source: KafkaSource, ranges: list[PlannedRange]) -> Iterator[pa.RecordBatch]:
    """The records of `ranges` ([start_offset, scan_end) each) as `RECORD_SCHEMA` batches, in order per partition."""
    from confluent_kafka import KafkaError, TopicPartition

    todo = {r.partition: r for r in reading(ranges)}
    if not todo:
        return
    with _client(source) as client:
        client.call(client.consumer.assign, [TopicPartition(source.topic, r.partition, r.start_offset)
                                             for r in todo.values()])  # fmt: skip
        idle_until = time.monotonic() + source.timeout_ms / 1000
        following = {p: r.start_offset for p, r in todo.items()}  # the next offset of each partition
        while todo:
            # `consume` returns once it holds `num_messages` (or at its timeout): ask for no more than is left
            left = sum(todo[p].scan_end - following[p] for p in todo)
            messages = client.call(client.consumer.consume, num_messages=max(1, min(left, 10_000)), timeout=_POLL_S)
            rows = []
            for m in messages:
                error = m.error()
                if error is not None and error.code() == KafkaError._PARTITION_EOF:
                    todo.pop(m.partition(), None)  # the plan checked the watermark is past the scan end
                    continue
                if error is not None:
                    raise client.fail("read failed", Exception(error))
                plan = todo.get(m.partition())
                if plan is None:
                    continue
                if m.offset() >= plan.scan_end:  # past the range (its last offsets were no records: markers)
                    del todo[m.partition()]
                    continue
                following[m.partition()] = m.offset() + 1
                kind, ts = m.timestamp()
                headers = m.headers()
                rows.append({"topic": m.topic(), "partition": m.partition(), "offset": m.offset(),
                             "timestampType": _TIMESTAMP_TYPE.get(kind, -1), "ts": ts,
                             "headers": [{"key": k, "value": v} for k, v in headers] if headers else [],
                             "key": m.key(), "value": m.value()})  # fmt: skip
                if m.offset() >= plan.scan_end - 1:
                    del todo[m.partition()]
            if rows:
                idle_until = time.monotonic() + source.timeout_ms / 1000
                yield pa.RecordBatch.from_pylist(rows, schema=RECORD_SCHEMA)
            elif todo and time.monotonic() > idle_until:
                raise client.fail("read timed out", Exception(f"no records of partitions {sorted(todo)}"))


def read_day_records(
    source: KafkaSource, ranges: list[PlannedRange], bounds: DayBounds
) -> tuple[pa.Table, dict[int, tuple[int, int, int]]]:
    """The records of `ranges` whose timestamp is in the day, and (first, last, count) of them per partition."""
    kept, stats = [], {}
    for batch in _batches(source, ranges):
        ts = batch.column("ts").to_pylist()
        mask = [bounds.start_ms <= t < bounds.end_ms for t in ts]
        day = batch.filter(pa.array(mask))
        kept.append(day)
        for p, offset in zip(day.column("partition").to_pylist(), day.column("offset").to_pylist(), strict=True):
            first, last, n = stats.get(p, (offset, offset, 0))
            stats[p] = (min(first, offset), max(last, offset), n + 1)
    return pa.Table.from_batches(kept, schema=RECORD_SCHEMA), stats
