"""A Kafka day on the local engine (`decode.kafka_day` with no session: the native client, delta-rs, no JVM),
against the session's test broker: the same lake as Spark's Kafka source makes, a rerun at the recorded offsets, an
incomplete day refused (and read on purpose), a failed login and a missing topic with nothing written."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdc_pipelines.cli.commands import main
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, KAFKA_OFFSETS_DIR, REJECTS_DIR
from tests.extract.kafka_broker import READER_PASSWORD, Topics
from tests.extract.kafka_messages import Record, day_ms, debezium, topic_records

pytestmark = pytest.mark.system

DAY0 = dt.date(2026, 11, 1)
DAY0_MS = int(dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()) * 1000
TOPICS = {"native-orders": "oms-canal", "native-customers": "oms-debezium", "native-items": "dts-avro"}
TABLES = (CHANGES_DIR, REJECTS_DIR, COUNTS_DIR, KAFKA_OFFSETS_DIR)


def day(n: int) -> str:
    return (DAY0 + dt.timedelta(days=n)).isoformat()


@pytest.fixture(scope="module")
def topics(kafka_broker):
    """Two complete days of each format (headers, keys, tombstones, binary values) and a Debezium message that
    is no JSON (a reject)."""
    made = Topics(kafka_broker.bootstrap, DAY0_MS)
    for name, format_id in TOPICS.items():
        made.create(name)
        records = topic_records(format_id, DAY0_MS, days=2)
        if format_id == "oms-debezium":  # among day 0's messages, before the next day's in its partition
            records.insert(3, Record(1, day_ms(DAY0_MS, 0, 3), b"{not json"))
        made.send(name, records)
    yield made
    made.producer.close()
    made.admin.close()


def _decode(capsys, name: str, lake, *args: str, bootstrap: str) -> tuple[int, dict | str]:
    """`decode --kafka` of day `--dt` (in `args`): exit code and counts, or what it wrote to stderr."""
    code = main(["decode", "--format", TOPICS[name], "--kafka", bootstrap, "--topic", name, "--out", str(lake),
                 "--conf", "kafka.timeout_ms=10000", *args])  # fmt: skip
    out, err = capsys.readouterr()
    return code, (json.loads(out.splitlines()[-1]) if code == 0 else err)


def _lake(lake) -> dict[str, list[str]]:
    """Every row of the lake's four tables as sorted JSON texts (read with delta-rs, whoever wrote them)."""
    return {t: sorted(json.dumps(r, sort_keys=True, default=str) for r in delta_rs.read_rows(str(lake / t)))
            for t in TABLES}  # fmt: skip


def test_a_day_read_by_either_engine_gives_the_same_lake(topics, tmp_path, capsys):
    """Day 0 of a JSON and a binary format through `--engine local` and `--engine spark`: equal changes (event
    ids, meta of the Kafka coordinates, headers, keys, tombstones), rejects, counts and recorded offsets. (canal
    takes the same lines: `tests/extract/test_kafka.py` holds Spark's read of it equal to its kcat file.)"""
    counts = {}
    for name in ("native-customers", "native-items"):
        for engine in ("local", "spark"):
            code, counts[name, engine] = _decode(capsys, name, tmp_path / engine, "--dt", day(0), "--engine", engine,
                                                 bootstrap=topics.bootstrap)  # fmt: skip
            assert code == 0, counts[name, engine]
        assert counts[name, "local"] == counts[name, "spark"]
    assert counts["native-customers", "local"] == {"read": 9, "decoded": 8, "rejected": 1, "filtered": 0, "events": 8}
    local, spark = _lake(tmp_path / "local"), _lake(tmp_path / "spark")
    assert local == spark
    assert [len(local[t]) for t in TABLES] == [8 + 6, 1, 2, 6]  # debezium: 6 changes and 2 tombstones
    offsets = [json.loads(r) for r in local[KAFKA_OFFSETS_DIR] if '"native-items"' in r]
    assert {o["partition"]: (o["first"], o["last"], o["messages"]) for o in offsets} == (
        topics.expected_offsets("native-items", 0)
    )


def test_a_rerun_reads_the_recorded_offsets_and_an_incomplete_day_is_refused(topics, tmp_path, capsys):
    name, lake = "native-customers", tmp_path / "lake"
    run = ("--engine", "local")
    code, first = _decode(capsys, name, lake, "--dt", day(0), *run, bootstrap=topics.bootstrap)
    assert code == 0 and first["read"] == sum(n for *_, n in topics.expected_offsets(name, 0).values())
    before = _lake(lake)
    # a late message of day 0 arrives after day 2's first: a read by timestamps would hold it, the rerun does not
    topics.send(name, [Record(0, day_ms(DAY0_MS, 0, 23.9), debezium(700, DAY0_MS, "c")[1])])
    assert _decode(capsys, name, lake, "--dt", day(0), *run, bootstrap=topics.bootstrap) == (0, first)
    assert _lake(lake) == before
    # day 2 has only the messages past day 1 so far (00:30 in each partition; partition 0's newest is the late one)
    code, err = _decode(capsys, name, lake, "--dt", day(2), *run, bootstrap=topics.bootstrap)
    behind = f"partition 0 is at {day(0)} 23:54, partition 1 is at 00:30, partition 2 is at 00:30"
    assert code == 2 and f"day {day(2)} of topic {name} is not complete: {behind}" in err
    assert _lake(lake) == before  # nothing written
    code, read = _decode(capsys, name, lake, "--dt", day(2), "--allow-incomplete", *run, bootstrap=topics.bootstrap)
    assert code == 0 and read["read"] == 3
    offsets = [json.loads(r) for r in _lake(lake)[KAFKA_OFFSETS_DIR] if day(2) in r]
    assert sorted((o["partition"], o["messages"]) for o in offsets) == [(0, 1), (1, 1), (2, 1)]


def test_a_failed_login_and_a_missing_topic_write_nothing(kafka_broker, topics, tmp_path, capsys):
    def login(password: str) -> list[str]:
        jaas = (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required username="reader" password="{password}";'
        )
        return ["--conf", "kafka.security.protocol=SASL_PLAINTEXT", "--conf", "kafka.sasl.mechanism=PLAIN",
                "--conf", f"kafka.sasl.jaas.config={jaas}"]  # fmt: skip

    name, sasl = "native-orders", kafka_broker.sasl_bootstrap
    code, err = _decode(capsys, name, tmp_path / "refused", "--dt", day(0), "--engine", "local", *login("wrong-Pa55"),
                        bootstrap=sasl)  # fmt: skip
    assert code == 2 and "kafka topic native-orders" in err and "authentication failed" in err
    assert "wrong-Pa55" not in err and not (tmp_path / "refused").exists()
    code, counts = _decode(capsys, name, tmp_path / "lake", "--dt", day(0), "--engine", "local",
                           *login(READER_PASSWORD), bootstrap=sasl)  # fmt: skip
    assert code == 0 and counts["read"] == 6
    code, err = _decode(capsys, name, tmp_path / "none", "--dt", day(0), "--engine", "local", "--kafka-topic",
                        "no-such-topic", bootstrap=topics.bootstrap)  # fmt: skip
    assert code == 2 and "kafka topic no-such-topic" in err and "topic does not exist" in err
    assert not (tmp_path / "none").exists()
