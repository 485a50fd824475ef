"""decode, encode and snapshot on a Spark standalone cluster (a master and one worker on 127.0.0.1) give
exactly what the same commands give in local mode. The test's tmp folder is the shared filesystem."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

import fastavro
import pytest
from pyspark.sql import functions as F

from cdc_pipelines.cli.commands import main
from cdc_pipelines.demo.extracts import canonical_events, write_extract
from cdc_pipelines.snapshots.store import ANOMALIES, CURRENT, HISTORY
from tests.cluster.standalone import standalone_cluster
from tests.one_process import run_commands

ROOT = Path(__file__).resolve().parents[2]
DAYS = ("2024-01-01", "2024-01-02")
FORMAT, TARGET = "oms-canal", "dts-avro"


def table_roots(root: Path) -> list[Path]:
    """The local folders of every snapshot table with a current table."""
    patterns = (f"db=*/table=*/{CURRENT}", f"db=*/schema=*/table=*/{CURRENT}")
    return sorted(p.parent for pattern in patterns for p in root.glob(pattern) if p.is_dir())


def _commands(raw: Path, lake: Path) -> list[list[str]]:
    decodes = [["decode", "--format", FORMAT, "--out", str(lake), "--topic", FORMAT, "--dt", day,
                str(raw / f"dt={day}")] for day in DAYS]  # fmt: skip
    encode = ["encode", "--to", TARGET, "--out", str(lake / "targets"), str(lake / "changes")]
    snapshots = [["snapshot", "--canonical", str(lake), "--dt", day] for day in DAYS]
    return [*decodes, encode, *snapshots]


# where the executors' Python workers import `cdc_pipelines` from
PROBE = """
from cdc_pipelines.runtime.session import spark_session
context = spark_session().sparkContext
result = context.parallelize([0], 1).map(lambda _: __import__("cdc_pipelines").__file__).first()
"""


def _run_on(master: str, commands: list[list[str]], log: Path) -> tuple[list[dict], str]:
    """The commands on `master`, in one driver process (one JVM start): each command's last line, and where
    that driver's executors imported `cdc_pipelines` from."""
    env = os.environ | {"CDC_SPARK_MASTER": master, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    return run_commands(commands, env, ROOT, log, 600 * (len(commands) + 1), probe=PROBE)


def _records(path: Path) -> list[dict]:
    with open(path, "rb") as fh:
        return list(fastavro.reader(fh))


def _delta_rows(spark, path: Path) -> list[str]:
    """A Delta table's live rows as sorted JSON texts (its files hold rows deletion vectors removed)."""
    df = spark.read.format("delta").load(str(path))
    return sorted(r[0] for r in df.select(F.to_json(F.struct(*df.columns))).collect())


def _without_paths(line: dict) -> dict:
    """A command's last line without the snapshot tables' paths (the two runs write to different lakes)."""
    tables = {name: {k: v for k, v in t.items() if k not in ("current", "history")}
              for name, t in line.get("per_table", {}).items()}  # fmt: skip
    return {**line, "per_table": tables} if "per_table" in line else line


@pytest.mark.system
def test_decode_encode_snapshot_on_a_standalone_cluster(spark, tmp_path, capsys):
    raw = tmp_path / "raw"
    for day in DAYS:
        write_extract(FORMAT, list(canonical_events(dt.date.fromisoformat(day), 20)), raw / f"dt={day}" / "p.jsonl")
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    local_lines = []
    for args in _commands(raw, local):
        assert main(args) == 0
        local_lines.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    with standalone_cluster(tmp_path / "spark") as master:
        cluster_lines, imported = _run_on(master, _commands(raw, cluster), tmp_path / "cli.log")
    # executors ran the driver's code, shipped as a zip, not a package some worker has installed
    assert imported.endswith("cdc_pipelines.zip/cdc_pipelines/__init__.py"), imported
    assert [_without_paths(line) for line in cluster_lines] == [_without_paths(line) for line in local_lines]
    # one malformed line a day, targets written, three tables with rows: the data is not trivially empty
    assert local_lines[0]["rejected"] == 1 and local_lines[2]["written"] > 0 and local_lines[-1]["tables"] == 3
    for sub in ("changes", "rejects", f"snapshots/{ANOMALIES}"):  # Delta tables (the anomalies' may be empty)
        assert _delta_rows(spark, cluster / sub) == _delta_rows(spark, local / sub), sub
    tables = [p.relative_to(local / "snapshots") for p in table_roots(local / "snapshots")]
    assert len(tables) == 3
    assert [p.relative_to(cluster / "snapshots") for p in table_roots(cluster / "snapshots")] == tables
    for table in tables:  # the current and history Delta tables after the last day
        for kind in (CURRENT, HISTORY):
            part = table / kind
            assert _delta_rows(spark, cluster / "snapshots" / part) == _delta_rows(spark, local / "snapshots" / part)
    assert sorted(p.name for p in (cluster / "targets" / TARGET).rglob("*.avro")) == sorted(
        p.name for p in (local / "targets" / TARGET).rglob("*.avro")
    )
    for avro in (local / "targets" / TARGET).rglob("*.avro"):  # records in order (sync markers are random)
        assert _records(cluster / avro.relative_to(local)) == _records(avro), avro
