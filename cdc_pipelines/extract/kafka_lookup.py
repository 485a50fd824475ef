"""Offsets looked up once on the driver, before Spark reads: Kafka's own consumer in Spark's JVM.

Spark's Kafka source brings `kafka-clients` (the jars `runtime.session.jar_packages` adds), so a day Spark
reads is looked up through the same client, with the same security settings, that the read itself uses (the
local engine's day goes through the native client, `extract.kafka_client`). Each lookup is bounded by the
source's `timeout_ms`; every failure becomes one `KafkaSourceError` naming the topic and what failed, with
secrets scrubbed from the client's words.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pyspark.sql import SparkSession

from cdc_pipelines.extract.kafka_plan import PartitionState
from cdc_pipelines.extract.kafka_source import KafkaSource, KafkaSourceError

_BYTES = "org.apache.kafka.common.serialization.ByteArrayDeserializer"


def _cause(error: Exception) -> str:
    """The Java exception's class and message, where py4j wrapped one."""
    java = getattr(error, "java_exception", None)
    if java is None:
        return f"{type(error).__name__}: {error}"
    name = java.getClass().getSimpleName()
    cause = java.getCause()
    text = f"{name}: {java.getMessage()}"
    if cause is not None and cause.getMessage():
        text += f" ({cause.getClass().getSimpleName()}: {cause.getMessage()})"
    return text


def _what_failed(cause: str) -> str:
    if "Authentication" in cause or "Sasl" in cause or "SslAuthentication" in cause:
        return "authentication failed"
    if "Authorization" in cause:
        return "not authorized"
    if "Timeout" in cause:
        return "broker unreachable (timed out)"
    return "lookup failed"


@contextmanager
def _consumer(spark: SparkSession, source: KafkaSource) -> Iterator[object]:
    jvm = spark.sparkContext._jvm
    props = jvm.java.util.Properties()
    settings = {
        "key.deserializer": _BYTES, "value.deserializer": _BYTES, "enable.auto.commit": "false",
        "allow.auto.create.topics": "false", "default.api.timeout.ms": str(source.timeout_ms),
        "request.timeout.ms": str(source.timeout_ms), **source.consumer_settings(),
    }  # fmt: skip
    for key, value in settings.items():
        props.setProperty(key, value)
    try:
        consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(props)
    except Exception as exc:  # noqa: BLE001 - py4j raises its own types for the client's errors
        raise _error(source, exc, "cannot create a consumer") from None
    try:
        yield consumer
    finally:
        consumer.close(jvm.java.time.Duration.ofMillis(1000))


def _error(source: KafkaSource, exc: Exception, what: str | None = None) -> KafkaSourceError:
    cause = _cause(exc)
    return source.error(what or _what_failed(cause), cause)


def partition_states(spark: SparkSession, source: KafkaSource, timestamps: list[int]) -> list[PartitionState]:
    """Every partition of the source's topic, with its offsets at `timestamps` (Kafka's `offsetsForTimes`:
    the first offset whose timestamp is at or past each)."""
    jvm = spark.sparkContext._jvm
    timeout = jvm.java.time.Duration.ofMillis(source.timeout_ms)
    with _consumer(spark, source) as consumer:
        try:
            topics = consumer.listTopics(timeout)
            if not topics.containsKey(source.topic):
                raise KafkaSourceError(
                    f"kafka topic {source.topic} at {source.bootstrap_servers}: topic does not exist"
                )
            partitions = sorted(p.partition() for p in topics.get(source.topic))
            tps = jvm.java.util.ArrayList()
            for p in partitions:
                tps.add(jvm.org.apache.kafka.common.TopicPartition(source.topic, p))
            starts = consumer.beginningOffsets(tps, timeout)
            ends = consumer.endOffsets(tps, timeout)
            at: dict[int, dict[int, int | None]] = {p: {} for p in partitions}
            for ts in timestamps:
                query = jvm.java.util.HashMap()
                for tp in tps:
                    query.put(tp, jvm.java.lang.Long.valueOf(ts))
                found = consumer.offsetsForTimes(query, timeout)
                for tp in tps:
                    hit = found.get(tp)
                    at[tp.partition()][ts] = None if hit is None else int(hit.offset())
            return [
                PartitionState(tp.partition(), int(starts.get(tp)), int(ends.get(tp)), at[tp.partition()]) for tp in tps
            ]
        except KafkaSourceError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise _error(source, exc) from None


def newest_timestamps(spark: SparkSession, source: KafkaSource, states: list[PartitionState]) -> dict[int, int | None]:
    """The timestamp of each partition's newest message (None for an empty one): what an incomplete day's
    error names. Only read when a partition has no message past the day."""
    jvm = spark.sparkContext._jvm
    out: dict[int, int | None] = {s.partition: None for s in states}
    wanted = {s.partition: s.high_watermark - 1 for s in states if s.high_watermark > s.log_start}
    if not wanted:
        return out
    with _consumer(spark, source) as consumer:
        try:
            tps = jvm.java.util.ArrayList()
            for p in wanted:
                tps.add(jvm.org.apache.kafka.common.TopicPartition(source.topic, p))
            consumer.assign(tps)
            for tp in tps:
                consumer.seek(tp, wanted[tp.partition()])
            for _ in range(20):
                if all(out[p] is not None for p in wanted):
                    break
                records = consumer.poll(jvm.java.time.Duration.ofMillis(500)).iterator()
                while records.hasNext():
                    record = records.next()
                    p = record.partition()
                    if record.offset() >= wanted.get(p, 1 << 62):
                        out[p] = max(out[p] or 0, int(record.timestamp()))
        except Exception as exc:  # noqa: BLE001
            raise _error(source, exc) from None
    return out


@dataclass(frozen=True)
class SparkLookup:
    """The `kafka_plan.OffsetLookup` of Spark's Kafka consumer, in the session's JVM."""

    spark: SparkSession
    source: KafkaSource

    def partition_states(self, timestamps: list[int]) -> list[PartitionState]:
        return partition_states(self.spark, self.source, timestamps)

    def newest_timestamps(self, states: list[PartitionState]) -> dict[int, int | None]:
        return newest_timestamps(self.spark, self.source, states)
