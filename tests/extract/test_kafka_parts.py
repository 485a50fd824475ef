"""The Kafka source's pure parts, without Spark or a broker: day bounds in a time zone, the incomplete
day's message, offsets bookkeeping and gap detection, secret redaction, kcat headers in the meta."""

from __future__ import annotations

import datetime as dt

import pytest

from cdc_pipelines.extract.kafka_days import KafkaDayError, day_bounds, incomplete_message
from cdc_pipelines.extract.kafka_source import (
    KafkaSource,
    KafkaSourceError,
    kafka_source,
    redacted,
    scrub,
    split_kafka_conf,
)
from cdc_pipelines.extract.messages import unwrap_kcat
from cdc_pipelines.model.kafka_offsets import PartitionOffsets, find_gaps, summarize


def _ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).timestamp() * 1000)


def test_day_bounds_utc_and_a_zone():
    utc = day_bounds("2026-11-25")
    assert (utc.start_ms, utc.end_ms) == (_ms("2026-11-25T00:00:00+00:00"), _ms("2026-11-26T00:00:00+00:00"))
    shanghai = day_bounds("2026-11-25", "Asia/Shanghai")
    assert shanghai.start_ms == _ms("2026-11-24T16:00:00+00:00")
    assert shanghai.end_ms - shanghai.start_ms == 86_400_000


def test_day_bounds_across_daylight_saving_changes():
    autumn = day_bounds("2026-10-25", "Europe/Berlin")  # clocks go back: 25 hours
    assert autumn.end_ms - autumn.start_ms == 25 * 3_600_000
    spring = day_bounds("2026-03-29", "Europe/Berlin")  # clocks go forward: 23 hours
    assert spring.end_ms - spring.start_ms == 23 * 3_600_000
    assert day_bounds("2026-03-29", "Europe/Berlin").end_ms == day_bounds("2026-03-30", "Europe/Berlin").start_ms


def test_day_bounds_lateness_and_bad_input():
    bounds = day_bounds("2026-11-25", late_seconds=600)
    assert bounds.scan_end_ms == bounds.end_ms + 600_000
    for args in (("2026-13-01",), ("2026-11-25", "Mars/Olympus"), ("2026-11-25", "UTC", -1)):
        with pytest.raises(KafkaDayError):
            day_bounds(*args)


def test_incomplete_message_names_each_partition_behind():
    bounds = day_bounds("2026-11-25")
    latest = {0: bounds.end_ms + 5, 3: _ms("2026-11-25T23:41:00+00:00"), 2: None, 1: _ms("2026-11-24T22:00:00+00:00")}
    message = incomplete_message("orders", bounds, latest)
    assert message.startswith(
        "day 2026-11-25 of topic orders is not complete: partition 1 is at 2026-11-24 22:00, partition 2 is empty, "
        "partition 3 is at 23:41"
    )
    assert "partition 0" not in message
    assert incomplete_message("orders", bounds, {0: bounds.end_ms, 1: bounds.end_ms + 1}) is None
    late = day_bounds("2026-11-25", late_seconds=60)
    assert "partition 0 is at 2026-11-26 00:00" in incomplete_message("orders", late, {0: late.end_ms})


def _day(partition: int, start: int, end: int, messages: int = 1) -> PartitionOffsets:
    return PartitionOffsets(partition, start, end, end, start if messages else None, end - 1 if messages else None,
                            messages, 0, 1)  # fmt: skip


def test_gaps_and_overlaps_between_consecutive_days():
    days = {
        ("orders", "2026-11-24"): [_day(0, 0, 10), _day(1, 0, 7)],
        ("orders", "2026-11-25"): [_day(0, 10, 20), _day(1, 9, 12)],  # partition 1: 2 offsets no day read
        ("orders", "2026-11-26"): [_day(0, 18, 30), _day(1, 12, 12, 0)],  # partition 0: 2 offsets read twice
        ("orders", "2026-11-28"): [_day(0, 40, 50)],  # the 27th was never read: not compared
        ("items", "2026-11-25"): [_day(0, 0, 5)],
    }
    gaps = find_gaps(days)
    assert [(g.day, g.partition, g.kind, g.messages) for g in gaps] == [
        ("2026-11-24", 1, "gap", 2),
        ("2026-11-25", 0, "overlap", 2),
    ]
    assert gaps[0].reason() == (
        "gap in topic orders partition 1: 2026-11-24 ends at offset 7, 2026-11-25 starts at 9 (2 offsets no day read)"
    )
    assert find_gaps({("orders", "2026-11-24"): [_day(0, 0, 10)], ("orders", "2026-11-25"): [_day(0, 10, 11)]}) == []


def test_summarize_per_partition():
    summary = summarize([_day(1, 5, 9, 4), _day(0, 0, 0, 0)])
    assert list(summary) == ["0", "1"]
    assert summary["1"] == {"first": 5, "last": 8, "messages": 4, "start_offset": 5, "end_offset": 9}
    assert summary["0"]["first"] is None


def test_secrets_are_redacted_and_scrubbed():
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="pw-123";'
    settings = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas,
                "ssl.truststore.password": "tpw", "ssl.key.password": "kpw"}  # fmt: skip
    shown = redacted(settings)
    assert shown["security.protocol"] == "SASL_SSL" and shown["sasl.mechanism"] == "PLAIN"
    assert {shown[k] for k in ("sasl.jaas.config", "ssl.truststore.password", "ssl.key.password")} == {"*****"}
    assert scrub(f"login failed for {jaas} with tpw", settings) == "login failed for ***** with *****"
    source = KafkaSource("b:9093", "orders", settings)
    assert "pw-123" not in source.describe() and "SASL_SSL" in source.describe()
    assert source.spark_options()["kafka.sasl.jaas.config"] == jaas  # the source itself still gets it


def test_kafka_conf_is_split_from_spark_conf_and_reader_settings_from_the_consumer():
    kafka, spark = split_kafka_conf({"kafka.security.protocol": "SASL_SSL", "spark.driver.memory": "1g",
                                     "kafka.late_seconds": "60"})  # fmt: skip
    assert spark == {"spark.driver.memory": "1g"}
    source = kafka_source("b:9092", "orders", kafka | {"time_zone": "Asia/Shanghai", "allow_incomplete": "true"})
    assert source.options == {"security.protocol": "SASL_SSL"}
    assert (source.late_seconds, source.time_zone, source.allow_incomplete) == (60, "Asia/Shanghai", True)
    with pytest.raises(KafkaSourceError):
        kafka_source("b:9092", "orders", {"late_seconds": "soon"})
    with pytest.raises(KafkaSourceError):
        kafka_source("", "orders")


def test_kcat_headers_reach_the_meta_as_their_list():
    line = b'{"topic":"t","partition":1,"offset":7,"tstype":"create","ts":5,"headers":["a","1","b",null],"payload":"x"}'
    payload, meta = unwrap_kcat(line)
    assert payload == b"x"
    assert meta["cdc.kafka.headers"] == '["a","1","b",null]'
    assert "cdc.kafka.key" not in meta


def test_catalog_kafka_topics(tmp_path, monkeypatch):
    from cdc_pipelines.extract.catalog import CatalogError, load_catalog

    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "topics:\n"
        "  - {name: customers, format: oms-debezium, keys_from: kafka, snapshot: true,\n"
        "     kafka: {bootstrap_servers: 'b1:9092,b2:9092', topic: dbz.customers,\n"
        "             options: {security.protocol: SASL_SSL, sasl.jaas.config: '${TEST_JAAS}', late_seconds: 60}}}\n"
        "  - {name: items, format: dts-avro, kafka: {bootstrap_servers: 'b:9092'}}\n"
    )
    customers, items = load_catalog(catalog)
    assert customers.envelope == "kcat" and customers.keys_from == "kafka"
    assert (customers.kafka.bootstrap_servers, customers.kafka.topic, customers.kafka.late_seconds) == (
        "b1:9092,b2:9092", "dbz.customers", 60)  # fmt: skip
    assert items.kafka.topic == "items" and items.envelope == "kcat"  # a binary format read from Kafka
    monkeypatch.setenv("TEST_JAAS", "jaas-with-Secret")
    assert customers.kafka.consumer_settings()["sasl.jaas.config"] == "jaas-with-Secret"
    assert "jaas-with-Secret" not in customers.kafka.describe() and "${TEST_JAAS}" not in customers.kafka.describe()
    monkeypatch.delenv("TEST_JAAS")
    with pytest.raises(KafkaSourceError, match="TEST_JAAS"):
        customers.kafka.consumer_settings()
    bad_entries = ("kafka: {topic: t}", "kafka: {bootstrap_servers: b, port: 1}",
                   "kafka: {bootstrap_servers: b, options: 1}")  # fmt: skip
    for bad in bad_entries:
        catalog.write_text(f"topics:\n  - {{name: t, format: oms-canal, {bad}}}\n")
        with pytest.raises(CatalogError):
            load_catalog(catalog)


def test_client_errors_are_named_by_what_failed():
    from cdc_pipelines.extract.kafka_lookup import _what_failed

    assert _what_failed("SaslAuthenticationException: Authentication failed: Invalid username or password") == (
        "authentication failed"
    )
    assert _what_failed("TopicAuthorizationException: Not authorized to access topics: [orders]") == "not authorized"
    assert _what_failed("TimeoutException: Timeout expired while fetching topic metadata") == (
        "broker unreachable (timed out)"
    )
    assert _what_failed("KafkaException: something else") == "lookup failed"
