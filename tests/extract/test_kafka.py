"""Kafka as a raw source, against a real Apache Kafka broker (KRaft, on 127.0.0.1, started by pid).

Three topics (canal, Debezium with keys and tombstones, DTS Avro binary) over three days and three
partitions; each day read from Kafka must decode exactly as the same messages do as a `kcat -J` file
extract, every column but lineage. Then: the offsets table, a rerun after more messages arrived, the
refusal of an incomplete day, a gap between two days in the conservation rule, and the errors of an
unreachable broker and a missing topic with nothing committed.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from cdc_pipelines.cli.commands import main
from cdc_pipelines.decode.kafka_day import decode_kafka_day, write_kafka_day
from cdc_pipelines.decode.runner import decode_files
from cdc_pipelines.extract.kafka_offsets import find_gaps
from cdc_pipelines.extract.kafka_source import KafkaSourceError, kafka_source
from cdc_pipelines.lake.io import read_canonical, table_version
from cdc_pipelines.lake.kafka_offsets import read_days_offsets, read_offsets
from tests.extract.kafka_broker import free_port, start_broker
from tests.extract.kafka_messages import DAY_MS, Record, day_ms, debezium, topic_records

pytestmark = pytest.mark.system

DAY0 = dt.date(2026, 11, 1)
DAY0_MS = int(dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()) * 1000
TOPICS = {"orders": "oms-canal", "customers": "oms-debezium", "items": "dts-avro"}
LINEAGE = ("event_id", "source_file", "source_line")


def day(n: int) -> str:
    return (DAY0 + dt.timedelta(days=n)).isoformat()


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    running = start_broker(tmp_path_factory.mktemp("kafka"))
    yield running
    running.stop()


class Topics:
    """Produces records and remembers each one's offset (what a kcat extract of them would show)."""

    def __init__(self, bootstrap: str):
        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
        self.sent: dict[str, list[tuple[Record, int]]] = {}

    def create(self, name: str, partitions: int = 3) -> None:
        self.admin.create_topics([NewTopic(name, partitions, 1)])
        self.sent[name] = []

    def send(self, topic: str, records: list[Record]) -> None:
        futures = [
            (r, self.producer.send(topic, value=r.value, key=r.key, partition=r.partition, timestamp_ms=r.ts,
                                   headers=[(k, v) for k, v in r.headers]))  # fmt: skip
            for r in records
        ]
        self.producer.flush()
        self.sent[topic] += [(r, f.get(timeout=30).offset) for r, f in futures]

    def kcat_file(self, topic: str, format_id: str, n: int, folder) -> str:
        """The `kcat -C -J` lines of the day's messages (by timestamp), as a file extract holds them."""
        start, end = DAY0_MS + n * DAY_MS, DAY0_MS + (n + 1) * DAY_MS
        lines = []
        for r, offset in sorted(self.sent[topic], key=lambda s: (s[0].partition, s[1])):
            if not start <= r.ts < end:
                continue
            envelope = {"topic": topic, "partition": r.partition, "offset": offset, "tstype": "create", "ts": r.ts,
                        "broker": 1}  # fmt: skip
            if r.headers:
                envelope["headers"] = [x for k, v in r.headers for x in (k, None if v is None else v.decode())]
            envelope["key"] = None if r.key is None else r.key.decode()
            if r.value is None:
                envelope["payload"] = None
            elif format_id == "dts-avro":
                envelope["payload"] = json.dumps({"value_b64": base64.b64encode(r.value).decode()})
            else:
                envelope["payload"] = r.value.decode()
            lines.append(json.dumps(envelope))
        path = folder / f"{topic}-{n}.jsonl"
        path.write_text("".join(line + "\n" for line in lines))
        return str(path)

    def expected_offsets(self, topic: str, n: int) -> dict[int, tuple[int, int, int]]:
        """(first, last, count) per partition of the messages of day `n`."""
        start, end = DAY0_MS + n * DAY_MS, DAY0_MS + (n + 1) * DAY_MS
        out: dict[int, list[int]] = {}
        for r, offset in self.sent[topic]:
            if start <= r.ts < end:
                out.setdefault(r.partition, []).append(offset)
        return {p: (min(o), max(o), len(o)) for p, o in out.items()}


@pytest.fixture(scope="module")
def topics(broker):
    made = Topics(broker.bootstrap)
    for name, format_id in TOPICS.items():
        made.create(name)
        made.send(name, topic_records(format_id, DAY0_MS))
    yield made
    made.producer.close()
    made.admin.close()


def _rows(frame) -> list[str]:
    """Rows as sorted JSON texts without their lineage (a Kafka record's is its partition and offset)."""
    rows = [{k: v for k, v in r.asDict(recursive=True).items() if k not in LINEAGE} for r in frame.collect()]
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _source(topics: Topics, name: str, **settings):
    return kafka_source(topics.bootstrap, name, {"timeout_ms": "10000", **settings})


@pytest.mark.parametrize("name", list(TOPICS))
def test_each_day_decodes_as_its_kcat_extract(spark, topics, tmp_path, name):
    format_id = TOPICS[name]
    lake = tmp_path / "lake"
    for n in range(3):
        decoded = decode_kafka_day(spark, _source(topics, name), format_id, topic=name, dt=day(n), lake_root=lake)
        counts = write_kafka_day(spark, decoded, lake)
        extract = decode_files(spark, format_id, [topics.kcat_file(name, format_id, n, tmp_path)], topic=name,
                               dt=day(n), envelope="kcat")  # fmt: skip
        written = read_canonical(spark, lake / "changes").where(f"dt = '{day(n)}'").drop("dt", "source_topic")
        from_kcat = extract.events.drop("dt", "source_topic")
        kafka_rows, kcat_rows = _rows(written), _rows(from_kcat)
        assert kafka_rows == kcat_rows
        assert len(kafka_rows) == counts["events"] > 0
        assert counts["rejected"] == 0 and extract.rejects.isEmpty()
        assert counts["read"] == sum(c for _, _, c in topics.expected_offsets(name, n).values())
        kafka_topic, recorded = read_offsets(spark, lake, day(n), name)
        assert kafka_topic == name
        assert {p: (o.first, o.last, o.messages) for p, o in recorded.items() if o.messages} == (
            topics.expected_offsets(name, n)
        )
    metas = [json.loads(r) for r in kafka_rows]
    assert all(m["meta"]["cdc.kafka.topic"] == name and "cdc.kafka.offset" in m["meta"] for m in metas)
    if name == "customers":  # Debezium's deletes are followed by tombstones, with the Kafka key
        tombstones = [m for m in metas if m["raw_op"] == "TOMBSTONE"]
        assert tombstones and all(m["meta"]["cdc.kafka.key"].startswith('{"id"') for m in tombstones)
    if name == "orders":  # headers reach the meta as kcat's list
        assert any(m["meta"].get("cdc.kafka.headers", "").startswith('["trace","t-') for m in metas)
    days = read_days_offsets(spark, lake, [day(n) for n in range(3)])
    assert find_gaps(days) == []  # each day starts where the one before ended


def test_rerun_reads_the_recorded_offsets(spark, topics, tmp_path):
    name, lake = "orders", tmp_path / "lake"
    first = decode_kafka_day(spark, _source(topics, name), "oms-canal", topic=name, dt=day(1), lake_root=lake)
    write_kafka_day(spark, first, lake)
    before = _rows(read_canonical(spark, lake / "changes"))
    offsets_before = read_offsets(spark, lake, day(1), name)
    # a late message of day 1 arrives after day 2's: a new read by timestamps would hold it, a rerun must not
    late = day_ms(DAY0_MS, 1, 23.5)
    topics.send(name, [Record(0, late, topic_records("oms-canal", DAY0_MS, days=1, first=500)[0].value)])
    fresh = decode_kafka_day(spark, _source(topics, name, late_seconds=str(3 * 86400), allow_incomplete="true"),
                             "oms-canal", topic=name, dt=day(1))  # fmt: skip
    assert sum(fresh.decoded.read.values()) == sum(first.decoded.read.values()) + 1
    rerun = decode_kafka_day(spark, _source(topics, name), "oms-canal", topic=name, dt=day(1), lake_root=lake)
    assert rerun.rerun
    write_kafka_day(spark, rerun, lake)
    assert _rows(read_canonical(spark, lake / "changes")) == before
    assert read_offsets(spark, lake, day(1), name) == offsets_before


def test_incomplete_day_is_refused_and_nothing_written(spark, topics, tmp_path):
    name, lake = "customers", tmp_path / "lake"
    with pytest.raises(KafkaSourceError) as refused:
        decode_kafka_day(spark, _source(topics, name), "oms-debezium", topic=name, dt=day(3), lake_root=lake)
    message = str(refused.value)
    assert f"day {day(3)} of topic {name} is not complete: partition 0 is at 00:30" in message
    code = main(["decode", "--format", "oms-debezium", "--kafka", topics.bootstrap, "--topic", name, "--dt", day(3),
                 "--out", str(lake)])  # fmt: skip
    assert code == 2
    assert not os.path.exists(lake / "changes") and not os.path.exists(lake / "kafka_offsets")
    # on purpose: the day so far
    decoded = decode_kafka_day(spark, _source(topics, name, allow_incomplete="true"), "oms-debezium", topic=name,
                               dt=day(3), lake_root=lake)  # fmt: skip
    assert write_kafka_day(spark, decoded, lake)["read"] == 3


def test_gap_between_days_fails_conservation(spark, topics, tmp_path):
    from cdc_pipelines.quality.runner import check_conservation, load_partition

    name, lake = "gaps", tmp_path / "lake"
    topics.create(name, partitions=2)
    value = debezium(1, DAY0_MS, "c")[1]
    topics.send(name, [Record(p, day_ms(DAY0_MS, 0, 1 + p), value) for p in range(2)])
    source = _source(topics, name, allow_incomplete="true")
    write_kafka_day(spark, decode_kafka_day(spark, source, "oms-debezium", topic=name, dt=day(0), lake_root=lake),
                    lake)  # fmt: skip
    # day 0 is read before it is complete; then more of day 0 arrives, and day 1 is read by timestamps
    topics.send(name, [Record(0, day_ms(DAY0_MS, 0, 20), value)])
    topics.send(name, [Record(p, day_ms(DAY0_MS, 1, 2), value) for p in range(2)])
    topics.send(name, [Record(p, day_ms(DAY0_MS, 2, 2), value) for p in range(2)])
    write_kafka_day(spark, decode_kafka_day(spark, _source(topics, name), "oms-debezium", topic=name, dt=day(1),
                                            lake_root=lake), lake)  # fmt: skip
    gaps = find_gaps(read_days_offsets(spark, lake, [day(0), day(1)]))
    assert [(g.partition, g.kind, g.messages) for g in gaps] == [(0, "gap", 1)]
    result = check_conservation(load_partition(spark, str(lake), day(1)))
    assert not result.passed
    assert result.checks["kafka_offsets"] == {"checked": 1, "failed": 1}
    assert f"gap in topic {name} partition 0" in result.info["kafka_offset_gaps"][0]


def test_unreachable_broker_and_missing_topic_exit_2_with_nothing_committed(spark, topics, tmp_path, capsys):
    lake = tmp_path / "lake"
    secret = "s3cret-Pa55"
    jaas = f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{secret}";'
    args = ["decode", "--format", "oms-canal", "--topic", "orders", "--dt", day(0), "--out", str(lake),
            "--conf", "kafka.timeout_ms=3000", "--conf", f"kafka.sasl.jaas.config={jaas}"]  # fmt: skip
    assert main([*args, "--kafka", f"127.0.0.1:{free_port()}"]) == 2
    err = capsys.readouterr().err
    assert "kafka topic orders" in err and "unreachable" in err
    assert secret not in err and "*****" in err
    assert main([*args[:-4], "--kafka", topics.bootstrap, "--kafka-topic", "no-such-topic"]) == 2
    assert "kafka topic no-such-topic" in capsys.readouterr().err
    assert not os.path.exists(lake)
    assert table_version(spark, str(lake / "changes")) is None
