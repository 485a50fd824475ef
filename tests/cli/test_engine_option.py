"""`--engine` on the commands that read or write the lake: what each engine may serve, and the same lake
from either engine."""

from __future__ import annotations

import json

import pyarrow.compute as pc

from cdc_pipelines.cli.commands import main
from cdc_pipelines.lake import delta_rs
from tests.conftest import resource
from tests.extract.kafka_broker import free_port
from tests.snapshots.events import insert
from tests.snapshots.lakes import SnapshotEngine

DAY = "2024-03-01"


def _error(capsys) -> str:
    return capsys.readouterr().err


def test_local_asked_where_only_spark_serves_fails_at_once_saying_why(tmp_path, capsys):
    seed = str(resource("oms-canal", "seed.jsonl"))
    decode = ["decode", "--format", "oms-canal", "--out", str(tmp_path / "lake"), "--dt", DAY, "--engine", "local"]
    past = ["--conf", "cdc.decode.in_process_max_bytes=1", "--conf", "cdc.decode.processes=0"]  # sent to Spark
    assert main([*decode, *past, "--include", "shop.*", seed]) == 2
    assert "--engine local cannot run decode here: past `cdc.decode.in_process_max_bytes` with" in _error(capsys)
    kerberos = "kafka.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"
    assert main([*decode, "--kafka", "127.0.0.1:1", "--conf", kerberos]) == 2
    assert "--engine local cannot run decode here: a day read from Kafka with a setting the native" in _error(capsys)
    assert main([*decode, "--kafka", f"127.0.0.1:{free_port()}", "--conf", "kafka.timeout_ms=1000"]) == 2
    assert "kafka topic default at 127.0.0.1:" in _error(capsys)  # the native client's, no JVM started
    assert not (tmp_path / "lake").exists()  # nothing written
    named = SnapshotEngine("local", None).lake(tmp_path / "named", [insert(1, {"id": "1", "a b": "x"}, day=DAY)])
    assert main(["snapshot", "--canonical", str(named), "--dt", DAY, "--engine", "local"]) == 2
    assert "a column name needs column mapping" in _error(capsys)
    assert not (named / "snapshots").exists()


def _changes(lake) -> list[dict]:
    rows = delta_rs.read_partition(str(lake / "changes"), "dt", DAY, ("event_id", "op", "before", "after", "meta"))
    return rows.take(pc.sort_indices(rows, [("event_id", "ascending")])).to_pylist()


def test_the_same_decode_on_either_engine(spark, tmp_path, capsys):
    """A canal seed with a broken line through `--engine local` and `--engine spark`: the same counts, the
    same events and the same rejects."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    seed = str(resource("oms-canal", "seed.jsonl"))
    counts = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        args = ["decode", "--format", "oms-canal", "--out", str(out), "--dt", DAY, "--topic", "t", seed, str(bad)]
        assert main([*args, "--engine", engine]) == 0
        counts[engine] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert counts["local"] == counts["spark"] and counts["local"]["rejected"] == 1
    assert _changes(tmp_path / "local") == _changes(tmp_path / "spark")
    rejects = [delta_rs.read_partition(str(tmp_path / e / "rejects"), "dt", DAY, ("source_line", "reason")).to_pylist()
               for e in ("local", "spark")]  # fmt: skip
    assert rejects[0] == rejects[1]
