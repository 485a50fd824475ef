"""A real single-node Apache Kafka broker (KRaft) for the system tests, on 127.0.0.1, started and stopped
by pid (the session's `kafka_broker` fixture), and `Topics`, which produces to it.

Its jars (`org.apache.kafka:kafka_2.13` and what it needs at run time) come from Maven Central through
`mvn dependency:copy-dependencies` with a tiny pom, into a cache folder (CDC_KAFKA_CACHE, default
~/.cache/cdc_pipelines/kafka-VERSION): fetched once by the test itself, nothing committed.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from tests.extract.kafka_messages import DAY_MS, Record
from tests.processes import stop_by_pid

KAFKA_VERSION = "4.1.1"
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cdc-pipelines.test</groupId><artifactId>kafka-broker</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
"""
START_TIMEOUT_S = 45
READER_PASSWORD = "reader-Secret-1"
_BROKER_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
                f'password="admin-secret" user_admin="admin-secret" user_reader="{READER_PASSWORD}";')  # fmt: skip


def kafka_jars(version: str = KAFKA_VERSION) -> Path:
    """The folder of the broker's jars, fetched from Maven Central on first use."""
    cache = Path(os.environ.get("CDC_KAFKA_CACHE", Path.home() / ".cache" / "cdc_pipelines" / f"kafka-{version}"))
    jars = cache / "jars"
    if (cache / "complete").exists():
        return jars
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "pom.xml").write_text(POM.format(version=version))
    tmp = cache / "jars.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(
        ["mvn", "-q", "-B", "-f", str(cache / "pom.xml"), "dependency:copy-dependencies",
         f"-DoutputDirectory={tmp}", "-DincludeScope=runtime"],
        check=True, timeout=600,
    )  # fmt: skip
    shutil.rmtree(jars, ignore_errors=True)
    tmp.rename(jars)
    (cache / "complete").write_text(version)
    return jars


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Broker:
    """A running broker: its client address and its process."""

    bootstrap: str
    process: subprocess.Popen
    folder: Path
    sasl_bootstrap: str = ""  # a SASL_PLAINTEXT listener (PLAIN): user `reader`, password READER_PASSWORD

    def stop(self) -> None:
        """Stop the broker by its pid (`tests.processes.stop_by_pid`)."""
        stop_by_pid(self.process)


def _java(jars: Path, *args: str, heap: str = "256m") -> list[str]:
    return ["java", f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", f"{jars}/*", *args]


def start_broker(folder: Path) -> Broker:
    """Format a KRaft log folder under `folder` and start a broker+controller on free ports: a PLAINTEXT
    listener, a SASL_PLAINTEXT one (PLAIN logins) and the controller's."""
    jars = kafka_jars()
    port, controller, sasl = free_port(), free_port(), free_port()
    data = folder / "data"
    config = folder / "server.properties"
    config.write_text(
        "\n".join([
            "process.roles=broker,controller", "node.id=1", f"controller.quorum.voters=1@127.0.0.1:{controller}",
            f"listeners=PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl},CONTROLLER://127.0.0.1:{controller}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms=PLAIN", f"listener.name.sasl_plaintext.plain.sasl.jaas.config={_BROKER_JAAS}",
            "inter.broker.listener.name=PLAINTEXT", f"log.dirs={data}", "num.partitions=1",
            "offsets.topic.replication.factor=1", "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1", "group.initial.rebalance.delay.ms=0",
            "auto.create.topics.enable=false", "log.message.timestamp.before.max.ms=9223372036854775807",
            "log.message.timestamp.after.max.ms=9223372036854775807", "log.retention.ms=-1",
        ]) + "\n"
    )  # fmt: skip
    cluster = uuid.uuid4().hex[:22]
    subprocess.run(_java(jars, "kafka.tools.StorageTool", "format", "-t", cluster, "-c", str(config)),
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    log = open(folder / "broker.log", "wb")  # noqa: SIM115 - the broker's output for its whole life
    process = subprocess.Popen(_java(jars, "kafka.Kafka", str(config), heap="512m"), stdout=log, stderr=log)
    broker = Broker(f"127.0.0.1:{port}", process, folder, f"127.0.0.1:{sasl}")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Kafka broker exited: {(folder / 'broker.log').read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return broker
        except OSError:
            time.sleep(0.3)
    broker.stop()
    raise RuntimeError(f"the Kafka broker did not listen on {port} within {START_TIMEOUT_S} s")


class Topics:
    """Produces records and remembers each one's offset (what a kcat extract of them would show)."""

    def __init__(self, bootstrap: str, day0_ms: int):
        self.bootstrap, self.day0_ms = bootstrap, day0_ms
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
        self.sent: dict[str, list[tuple[Record, int]]] = {}

    def create(self, name: str, partitions: int = 3) -> None:
        self.admin.create_topics([NewTopic(name, partitions, 1)])
        self.sent[name] = []

    def send(self, topic: str, records: list[Record]) -> None:
        futures = [
            (
                r,
                self.producer.send(
                    topic,
                    value=r.value,
                    key=r.key,
                    partition=r.partition,
                    timestamp_ms=r.ts,
                    headers=[(k, v) for k, v in r.headers],
                ),
            )
            for r in records
        ]
        self.producer.flush()
        self.sent[topic] += [(r, f.get(timeout=30).offset) for r, f in futures]

    def kcat_file(self, topic: str, format_id: str, n: int, folder) -> str:
        """The `kcat -C -J` lines of the day's messages (by timestamp), as a file extract holds them."""
        start, end = self.day0_ms + n * DAY_MS, self.day0_ms + (n + 1) * DAY_MS
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
        start, end = self.day0_ms + n * DAY_MS, self.day0_ms + (n + 1) * DAY_MS
        out: dict[int, list[int]] = {}
        for r, offset in self.sent[topic]:
            if start <= r.ts < end:
                out.setdefault(r.partition, []).append(offset)
        return {p: (min(o), max(o), len(o)) for p, o in out.items()}
