"""Kafka as a raw source, against a real Apache Kafka broker (KRaft, on 127.0.0.1, started by pid).

Three topics (canal, Debezium with keys and tombstones, DTS Avro binary) over three days and three
partitions; each day read from Kafka must decode exactly as the same messages do as a `kcat -J` file
extract, every column but lineage. Then: the offsets table, a rerun after more messages arrived, the
refusal of an incomplete day, a gap between two days in the conservation rule, and the errors of an
unreachable broker and a missing topic with nothing committed.
"""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest

from cdc_pipelines.cli.commands import main
from cdc_pipelines.decode.kafka_day import decode_kafka_day, pin_kafka_day, read_local_day, write_kafka_day
from cdc_pipelines.decode.runner import CountedPass, decode_files
from cdc_pipelines.extract.kafka_source import KafkaSourceError, kafka_source
from cdc_pipelines.lake.io import read_canonical, table_version
from cdc_pipelines.lake.kafka_offsets import read_days_offsets, read_offsets
from cdc_pipelines.model.kafka_offsets import find_gaps
from tests.extract.kafka_broker import READER_PASSWORD, Topics, free_port
from tests.extract.kafka_messages import Record, day_ms, debezium, topic_records

pytestmark = pytest.mark.system

DAY0 = dt.date(2026, 11, 1)
DAY0_MS = int(dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()) * 1000
TOPICS = {"orders": "oms-canal", "customers": "oms-debezium", "items": "dts-avro"}
LINEAGE = ("event_id", "source_file", "source_line")


def day(n: int) -> str:
    return (DAY0 + dt.timedelta(days=n)).isoformat()


@pytest.fixture(scope="module")
def broker(kafka_broker):
    return kafka_broker


@pytest.fixture(scope="module")
def topics(broker):
    made = Topics(broker.bootstrap, DAY0_MS)
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


def _day_offsets(offsets) -> dict[int, tuple[int, int, int]]:
    return {o.partition: (o.first, o.last, o.messages) for o in offsets if o.messages}


@pytest.mark.parametrize("name", list(TOPICS))
def test_each_day_decodes_as_its_kcat_extract(spark, topics, tmp_path, name):
    format_id = TOPICS[name]
    for n in range(3):
        kafka = decode_kafka_day(spark, _source(topics, name), format_id, topic=name, dt=day(n))
        extract = decode_files(spark, format_id, [topics.kcat_file(name, format_id, n, tmp_path)], topic=name,
                               dt=day(n), envelope="kcat")  # fmt: skip
        # every decoded row (events and rejects, with the columns of both) at once: one decode of each
        kafka_rows, kcat_rows = _rows(kafka.decoded.combined), _rows(extract.combined)
        assert kafka_rows == kcat_rows and kafka_rows
        assert all(json.loads(r)["reject_reason"] is None for r in kafka_rows)
        assert _day_offsets(kafka.day.offsets) == topics.expected_offsets(name, n)
        assert sum(kafka.decoded.read.values()) == sum(c for _, _, c in topics.expected_offsets(name, n).values())
        assert not kafka.rerun
    metas = [json.loads(r)["meta"] for r in kafka_rows]
    assert all(m["cdc.kafka.topic"] == name and "cdc.kafka.offset" in m and "cdc.kafka.ts" in m for m in metas)
    if name == "customers":  # Debezium's deletes are followed by tombstones, with the Kafka key
        tombstones = [json.loads(r) for r in kafka_rows if json.loads(r)["raw_op"] == "TOMBSTONE"]
        assert tombstones and all(t["meta"]["cdc.kafka.key"].startswith('{"id"') for t in tombstones)
    if name == "orders":  # headers reach the meta as kcat's list
        assert any(m.get("cdc.kafka.headers", "").startswith('["trace","t-') for m in metas)


def test_offsets_table_and_a_rerun_after_more_messages(spark, topics, tmp_path):
    name, lake = "orders", tmp_path / "lake"
    for n in range(2):
        decoded = decode_kafka_day(spark, _source(topics, name), "oms-canal", topic=name, dt=day(n), lake_root=lake)
        counts = write_kafka_day(spark, decoded, lake)
        assert counts["read"] == counts["decoded"] == counts["events"] > 0
        kafka_topic, recorded = read_offsets(spark, lake, day(n), name)
        assert kafka_topic == name and _day_offsets(recorded.values()) == topics.expected_offsets(name, n)
    # each day starts where the one before it ended
    assert find_gaps(read_days_offsets(spark, lake, [day(0), day(1)])) == []
    written = read_canonical(spark, lake / "changes").where(f"dt = '{day(1)}'")
    kcat = decode_files(spark, "oms-canal", [topics.kcat_file(name, "oms-canal", 1, tmp_path)], topic=name, dt=day(1),
                        envelope="kcat")  # fmt: skip
    assert _rows(written.drop("dt", "source_topic")) == _rows(CountedPass(kcat).events.drop("dt", "source_topic"))
    before, offsets_before = _rows(decoded.decoded.combined), read_offsets(spark, lake, day(1), name)
    # a late message of day 1 arrives after day 2's: a new read by timestamps holds it, a rerun must not
    late = day_ms(DAY0_MS, 1, 23.5)
    topics.send(name, [Record(0, late, topic_records("oms-canal", DAY0_MS, days=1, first=500)[0].value)])
    fresh = decode_kafka_day(spark, _source(topics, name, late_seconds=str(3 * 86400), allow_incomplete="true"),
                             "oms-canal", topic=name, dt=day(1))  # fmt: skip
    assert sum(fresh.decoded.read.values()) == sum(kcat.read.values()) + 1
    rerun = decode_kafka_day(spark, _source(topics, name), "oms-canal", topic=name, dt=day(1), lake_root=lake)
    assert rerun.rerun
    assert {o.partition: o for o in rerun.day.offsets} == offsets_before[1]
    assert _rows(rerun.decoded.combined) == before  # the same rows, lineage (partition, offset) aside


def test_incomplete_day_refused_and_one_read_on_purpose_leaves_a_gap_conservation_reports(spark, topics, tmp_path):
    from cdc_pipelines.engines.spark import SparkEngine
    from tests.quality.rows import rules_of

    name, lake = "customers", tmp_path / "lake"
    with pytest.raises(KafkaSourceError) as refused:
        decode_kafka_day(spark, _source(topics, name), "oms-debezium", topic=name, dt=day(3), lake_root=lake)
    assert f"day {day(3)} of topic {name} is not complete: partition 0 is at 00:30" in str(refused.value)
    code = main(["decode", "--format", "oms-debezium", "--kafka", topics.bootstrap, "--topic", name, "--dt", day(3),
                 "--out", str(lake)])  # fmt: skip
    assert code == 2
    assert not os.path.exists(lake)  # nothing written, not even an empty table
    # read on purpose before it is complete (through the CLI); then more of day 3 arrives, and day 4
    code = main(["decode", "--format", "oms-debezium", "--kafka", topics.bootstrap, "--topic", name, "--dt", day(3),
                 "--out", str(lake), "--allow-incomplete"])  # fmt: skip
    assert code == 0
    value = debezium(900, DAY0_MS, "c")[1]
    topics.send(name, [Record(0, day_ms(DAY0_MS, 3, 20), value)])
    topics.send(name, [Record(p, day_ms(DAY0_MS, d, 2), value) for d in (4, 5) for p in range(3)])
    pin_kafka_day(spark, _source(topics, name), "oms-debezium", topic=name, dt=day(4), lake_root=lake)  # its offsets
    gaps = find_gaps(read_days_offsets(spark, lake, [day(3), day(4)]))
    assert [(g.partition, g.kind, g.messages) for g in gaps] == [(0, "gap", 1)]
    result = rules_of(SparkEngine(spark), lake, day(3))["conservation_check"]  # day 3 beside the day after it
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


def test_dagster_raw_asset_records_the_offsets_and_canonical_decodes_them(spark, topics, tmp_path, monkeypatch):
    import dagster as dg

    from assets.graph import build_assets, build_resources
    from assets.keys import CANONICAL, raw_key
    from cdc_pipelines.extract.catalog import load_catalog

    secret = "dagster-Pa55"
    monkeypatch.setenv("TEST_KAFKA_JAAS", f'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                          f'username="u" password="{secret}";')  # fmt: skip
    (tmp_path / "catalog.yaml").write_text(
        "topics:\n  - name: items\n    format: dts-avro\n"
        f"    kafka: {{bootstrap_servers: '{topics.bootstrap}', options: {{sasl.jaas.config: '${{TEST_KAFKA_JAAS}}',"
        " timeout_ms: '10000'}}\n"
    )
    resources = build_resources(tmp_path / "catalog.yaml", tmp_path / "raw", tmp_path / "lake", data_docs=False)
    graph = build_assets(load_catalog(tmp_path / "catalog.yaml"))
    wanted = (raw_key("items"), CANONICAL)
    assets = [a for a in graph if not isinstance(a, dg.AssetChecksDefinition) and a.key in wanted]
    result = dg.materialize(assets, resources=resources, partition_key=day(0))
    assert result.success
    events = result.get_asset_materialization_events()
    by_key = {e.materialization.asset_key: e.materialization.metadata for e in events}
    raw = by_key[raw_key("items")]
    partitions = raw["partitions"].value
    assert {int(p): (v["first"], v["last"], v["messages"]) for p, v in partitions.items() if v["messages"]} == (
        topics.expected_offsets("items", 0)
    )
    assert raw["messages"].value == by_key[CANONICAL]["read"].value == 6
    assert secret not in json.dumps({str(k): str(v) for m in by_key.values() for k, v in m.items()})
    assert read_offsets(spark, tmp_path / "lake", day(0), "items")[0] == "items"


def test_offsets_deleted_by_retention_fail_the_day(spark, topics, tmp_path):
    from kafka.structs import TopicPartition

    name, lake = "trimmed", tmp_path / "lake"
    topics.create(name, partitions=1)
    value = debezium(7, DAY0_MS, "c")[1]
    topics.send(name, [Record(0, day_ms(DAY0_MS, 0, h), value) for h in (1, 2, 3)] + [Record(0, day_ms(DAY0_MS, 1, 1),
                                                                                                  value)])  # fmt: skip
    pinned = pin_kafka_day(spark, _source(topics, name), "oms-debezium", topic=name, dt=day(0), lake_root=lake)
    assert [(o.first, o.last, o.messages) for o in pinned] == [(0, 2, 3)]
    topics.admin.delete_records({TopicPartition(name, 0): 1})
    with pytest.raises(KafkaSourceError, match=f"kafka topic {name}: retention deleted offsets of day {day(0)}"):
        decode_kafka_day(spark, _source(topics, name), "oms-debezium", topic=name, dt=day(0), lake_root=lake)
    with pytest.raises(KafkaSourceError, match=f"retention may have deleted offsets of day {day(0)}"):
        decode_kafka_day(spark, _source(topics, name), "oms-debezium", topic=name, dt=day(0))
    # the local engine's native client, at the offsets Spark recorded and by timestamps: the same refusals
    with pytest.raises(KafkaSourceError, match=f"kafka topic {name}: retention deleted offsets of day {day(0)}"):
        read_local_day(_source(topics, name), "oms-debezium", topic=name, dt=day(0), lake_root=lake)
    with pytest.raises(KafkaSourceError, match=f"retention may have deleted offsets of day {day(0)}"):
        read_local_day(_source(topics, name), "oms-debezium", topic=name, dt=day(0))


def test_sasl_settings_reach_the_source_and_a_failed_login_exits_2(spark, broker, topics, tmp_path, capsys):
    def jaas(password: str) -> str:
        login = "org.apache.kafka.common.security.plain.PlainLoginModule"
        return f'{login} required username="reader" password="{password}";'

    args = ["decode", "--format", "oms-canal", "--topic", "orders", "--dt", day(0), "--kafka", broker.sasl_bootstrap,
            "--conf", "kafka.security.protocol=SASL_PLAINTEXT", "--conf", "kafka.sasl.mechanism=PLAIN",
            "--conf", "kafka.timeout_ms=10000"]  # fmt: skip
    wrong = "wrong-Pa55word"
    assert main([*args, "--out", str(tmp_path / "refused"), "--conf", f"kafka.sasl.jaas.config={jaas(wrong)}"]) == 2
    err = capsys.readouterr().err
    assert "kafka topic orders" in err and "authentication failed" in err and wrong not in err
    assert not os.path.exists(tmp_path / "refused")
    # the right password, through `convert` (read by timestamps, re-encoded, no lake)
    convert = ["convert", "--from", "oms-canal", "--to", "oms-default", *args[3:]]
    login = f"kafka.sasl.jaas.config={jaas(READER_PASSWORD)}"
    assert main([*convert, "--out", str(tmp_path / "out"), "--conf", login]) == 0
    out, err = capsys.readouterr()
    counts = json.loads(out.splitlines()[-1])
    assert counts["read"] == counts["written"] == sum(c for *_, c in topics.expected_offsets("orders", 0).values())
    assert READER_PASSWORD not in out + err and "*****" in err
    assert len(spark.read.text(str(tmp_path / "out" / "oms-default")).collect()) == counts["written"]
