"""decode -> encode, the quality report and two snapshot days on `s3a://` paths, against an S3 server on
127.0.0.1 (moto's), give what the same commands give on local paths. The S3 commands run in a process of
their own (one for all of them), their S3 settings given with `--conf`, as a user gives them; delta-rs
reads the S3 tables too."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import fastavro
import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder
from pyspark.sql import functions as F

from cdc_pipelines.cli.commands import main
from cdc_pipelines.demo.extracts import canonical_events, write_extract
from cdc_pipelines.lake import io
from tests.one_process import run_commands

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "lake"
DAYS = ("2024-01-01", "2024-01-02")
BIG_DAY = "2024-01-03"  # one text target file over the multipart threshold
FORMAT = "oms-canal"
MB5 = str(5 * 1024 * 1024)
KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory) -> Iterator[str]:
    """moto's S3 server on a free loopback port, started here and stopped by its pid."""
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    server = Path(sys.executable).with_name("moto_server")
    with open(log, "wb") as sink:
        proc = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)], stdout=sink, stderr=sink,
                                start_new_session=True)  # fmt: skip
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"moto_server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    try:
        yield endpoint
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def _s3(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint, **{k.lower(): v for k, v in KEYS.items() if k != "AWS_REGION"},
                        region_name=KEYS["AWS_REGION"])  # fmt: skip


def _conf(endpoint: str) -> list[str]:
    settings = {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": KEYS["AWS_REGION"],
        "spark.hadoop.fs.s3a.multipart.threshold": MB5,
        "spark.hadoop.fs.s3a.multipart.size": MB5,
        "spark.sql.shuffle.partitions": "1",  # one target file a partition: the big day's is over 5 MB
    }
    return [arg for key, value in settings.items() for arg in ("--conf", f"{key}={value}")]


def _commands(raw: str, lake: str) -> list[list[str]]:
    decodes = [["decode", "--format", FORMAT, "--out", lake, "--topic", FORMAT, "--dt", day, f"{raw}/dt={day}"]
               for day in (*DAYS, BIG_DAY)]  # fmt: skip
    encodes = [["encode", "--to", target, "--out", f"{lake}/targets", f"{lake}/changes"]
               for target in (FORMAT, "dts-avro")]  # fmt: skip
    # the second report renders the figures the first kept in the report folder (read back through Hadoop)
    quality = [["quality", "--canonical", lake, "--dt", DAYS[0], "--no-gx"]] * 2
    snapshots = [["snapshot", "--canonical", lake, "--dt", day] for day in DAYS]
    return [*decodes, *encodes, *quality, *snapshots]


def _without_paths(line: dict) -> dict:
    """A command's last line without the snapshot tables' paths (`file:` here, `s3a://` there)."""
    if "per_table" not in line:
        return line
    kept = {t: {k: v for k, v in f.items() if k not in ("current", "history")} for t, f in line["per_table"].items()}
    return line | {"per_table": kept}


def _run_s3(commands: list[list[str]], endpoint: str, log: Path) -> list[dict]:
    """The commands against S3, in one process of their own (the S3 settings are fixed at its session's start):
    each command's last line."""
    env = os.environ | KEYS | {"PYSPARK_PYTHON": sys.executable, "CDC_SPARK_MASTER": "local[2]"}
    lines, _ = run_commands([[*args, *_conf(endpoint)] for args in commands], env, ROOT, log, 900 * len(commands))
    return lines


def _table_rows(spark, path: str, raw_prefix: str) -> list[str]:
    """Every row as JSON, lineage made relative to the raw root and the ids (made from it) left out."""
    df = io.read_table(spark, path, spark.read.format("delta").load(path).schema)
    if "source_file" in df.columns:
        df = df.withColumn("source_file", F.replace("source_file", F.lit(raw_prefix), F.lit("RAW")))
    df = df.drop("event_id", "meta", "_cdc_event_id")
    return sorted(r[0] for r in df.select(F.to_json(F.struct(*sorted(df.columns)))).collect())


def _objects(client, prefix: str) -> dict[str, bytes]:
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for item in page.get("Contents", []):
            found[item["Key"][len(prefix) :]] = client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
    return found


def _local_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _avro_records(data: bytes) -> list[dict]:
    """The records without `id`: for canal events (no sequence of their own) it is made from the event
    id, which names the file read (`file:/...` here, `s3a://...` there)."""
    import io as stdio

    return [{k: v for k, v in r.items() if k != "id"} for r in fastavro.reader(stdio.BytesIO(data))]


@pytest.mark.system
def test_decode_encode_quality_on_s3_equal_the_local_run(spark, tmp_path, capsys, s3_endpoint):
    raw = tmp_path / "raw"
    for i, day in enumerate((*DAYS, BIG_DAY)):
        count = 12000 if day == BIG_DAY else 20
        events = list(canonical_events(dt.date.fromisoformat(day), count, seed=i))
        write_extract(FORMAT, events, raw / f"dt={day}" / "p.jsonl")
    client = _s3(s3_endpoint)
    client.create_bucket(Bucket=BUCKET)
    for path in raw.rglob("*.jsonl"):
        client.upload_file(str(path), BUCKET, f"raw/{path.relative_to(raw)}")

    local = tmp_path / "local"
    local_lines = []
    for args in _commands(str(raw), str(local)):
        assert main([*args, "--conf", "spark.sql.shuffle.partitions=1"]) == 0
        local_lines.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    s3_lake = f"s3a://{BUCKET}/lake"
    s3_commands = _commands(f"s3a://{BUCKET}/raw", s3_lake)
    s3_lines = _run_s3(s3_commands, s3_endpoint, tmp_path / "s3.log")
    assert [_without_paths(line) for line in s3_lines] == [_without_paths(line) for line in local_lines]
    snapshot_tables = s3_lines[-1]["per_table"]
    assert snapshot_tables and all(t["current"].startswith("s3a://") for t in snapshot_tables.values())
    assert local_lines[0]["rejected"] == 1 and local_lines[3]["written"] > 0

    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # this session reads the S3 tables too
    for pair in _conf(s3_endpoint)[1::2]:
        name, _, setting = pair.partition("=")
        if name.startswith("spark.hadoop."):
            hadoop.set(name.removeprefix("spark.hadoop."), setting)
    hadoop.set("fs.s3a.access.key", KEYS["AWS_ACCESS_KEY_ID"])
    hadoop.set("fs.s3a.secret.key", KEYS["AWS_SECRET_ACCESS_KEY"])
    for table in ("changes", "rejects", "counts"):
        s3_rows = _table_rows(spark, f"{s3_lake}/{table}", f"s3a://{BUCKET}/raw")
        assert s3_rows == _table_rows(spark, str(local / table), f"file:{raw}"), table
    options = {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ALLOW_HTTP": "true", **KEYS}
    assert DeltaTable(f"s3://{BUCKET}/lake/changes", storage_options=options).to_pyarrow_table().num_rows == sum(
        line["events"] for line in local_lines[:3]
    )
    for name, figures in local_lines[-1]["per_table"].items():  # the snapshot tables, by Spark and by delta-rs
        for kind in ("current", "history"):
            s3_path = snapshot_tables[name][kind]
            assert _table_rows(spark, s3_path, "") == _table_rows(spark, figures[kind], ""), (name, kind)
        table = DeltaTable(snapshot_tables[name]["current"].replace("s3a://", "s3://"), storage_options=options)
        rows = QueryBuilder().register("t", table).execute("SELECT count(*) AS n FROM t").read_all()
        assert pa.table(rows)["n"].to_pylist() == [figures["rows"]], name
    assert "summary.json" in _objects(client, f"lake/snapshots/_runs/dt={DAYS[1]}/")

    targets = _objects(client, "lake/targets/")
    local_targets = _local_files(local / "targets")
    text = {k: v for k, v in local_targets.items() if k.startswith(FORMAT) and "/part-" in k}
    s3_text = {k: v for k, v in targets.items() if k.startswith(FORMAT) and "/part-" in k}
    assert sorted(b"".join(v.splitlines(True)) for v in s3_text.values()) == sorted(text.values())
    big = next(k for k in s3_text if f"dt={BIG_DAY}" in k)
    assert len(s3_text[big]) > int(MB5)  # over S3A's multipart threshold (moto's ETag of it showed one part)
    avro = {k: _avro_records(v) for k, v in local_targets.items() if k.endswith(".avro")}
    assert {k: _avro_records(v) for k, v in targets.items() if k.endswith(".avro")} == avro
    assert avro

    report = _objects(client, f"lake/reports/dt={DAYS[0]}/")
    assert sorted(report) == ["figures.json", "index.html", "summary.json"]
    summary = json.loads(report["summary.json"])
    local_summary = json.loads((local / "reports" / f"dt={DAYS[0]}" / "summary.json").read_text())
    passed = {rule: figures["passed"] for rule, figures in local_summary["rules"].items()}
    assert {rule: figures["passed"] for rule, figures in summary["rules"].items()} == passed
