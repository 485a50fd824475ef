"""The day-ready sensor over a Kafka topic of the test broker: yesterday is requested once, when every
partition holds a message past the day's end plus its late seconds, and never before."""

import datetime as dt

import dagster as dg
import pytest
import yaml
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

import assets.automation
from assets.automation import SENSOR
from assets.graph import build_definitions
from tests.extract.kafka_broker import start_broker

pytestmark = pytest.mark.system
LATE_SECONDS = 600


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    running = start_broker(tmp_path_factory.mktemp("kafka"))
    yield running
    running.stop()


def _tick(defs, instance, cursor):
    context = dg.build_sensor_context(
        instance=instance, cursor=cursor, repository_def=defs.get_repository_def(), resources=defs.resources
    )
    return defs.resolve_sensor_def(SENSOR).evaluate_tick(context)


def test_a_kafka_day_is_requested_once_when_every_partition_is_past_it(spark, broker, tmp_path, monkeypatch):
    monkeypatch.setattr(assets.automation, "LOOKBACK_DAYS", 1)  # yesterday alone (earlier days are empty, complete)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("orders", 2, 1)])
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", linger_ms=0)
    yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    end_ms = int(dt.datetime.combine(yesterday + dt.timedelta(days=1), dt.time(), dt.UTC).timestamp()) * 1000

    def send(partition: int, ts: int) -> None:
        producer.send("orders", value=b"{}", partition=partition, timestamp_ms=ts).get(timeout=30)

    kafka = {
        "bootstrap_servers": broker.bootstrap,
        "options": {"late_seconds": str(LATE_SECONDS), "timeout_ms": "10000"},
    }
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(yaml.safe_dump({"topics": [{"name": "orders", "format": "oms-canal", "kafka": kafka}]}))
    defs = build_definitions(catalog, tmp_path / "raw", tmp_path / "lake")
    day = yesterday.isoformat()
    with dg.instance_for_test() as instance:
        send(0, end_ms - 60_000)
        send(1, end_ms - 60_000)
        cursor = None
        # the day's last minute, then past its end but within the late seconds, then one partition past them
        for partition, ts in ((None, None), (0, end_ms + 1000), (0, end_ms + LATE_SECONDS * 1000)):
            if partition is not None:
                send(partition, ts)
            waiting = _tick(defs, instance, cursor)
            assert not waiting.run_requests
            assert waiting.skip_message.startswith(f"{day} waits for orders: day {day} of topic orders is not complete")
            cursor = waiting.cursor
        send(1, end_ms + LATE_SECONDS * 1000 + 5)
        complete = _tick(defs, instance, cursor)
        assert [(r.partition_key, r.run_key) for r in complete.run_requests] == [(day, day)]
        again = _tick(defs, instance, complete.cursor)
        assert not again.run_requests and day not in again.skip_message
    producer.close()
    admin.close()
