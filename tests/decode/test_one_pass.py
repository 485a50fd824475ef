"""The decode's one pass: its counts, rejects and redelivery marks stay exact when Spark runs a task
again (each task's first attempt fails after its first batch of lines, `CDC_FAIL_FIRST_ATTEMPT`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from pyspark.sql import functions as F

from cdc_pipelines.decode.runner import decode_files, write_decoded

ROOT = Path(__file__).resolve().parents[2]
TYPES = {"mysqlType": {"id": "int", "name": "varchar(8)"}, "sqlType": {"id": 4, "name": 12}, "pkNames": ["id"]}


def _canal(n: int) -> str:
    return json.dumps({"data": [{"id": str(n), "name": f"n{n}"}], "database": "shop", "table": "orders",
                       "type": "INSERT", "es": 1704067200000 + n, "ts": 1704067200005 + n, "id": n, "isDdl": False,
                       "sql": "", "old": None, **TYPES})  # fmt: skip


def _extract(path: Path) -> Path:
    lines = [_canal(n) for n in range(1, 601)]
    lines[99] = "{not json"  # a reject in the first task's first batch, one in a later batch
    lines[450] = "[]"
    lines += [lines[10], lines[500]]  # two redeliveries, in the last batch
    path.write_text("\n".join(lines) + "\n")
    return path


def _decode_retried(extract: Path, out: Path) -> tuple[dict, str]:
    """A decode in a process of its own whose tasks fail their first attempt (two attempts per task)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CDC_SPARK_MASTER": "local[2,2]", "CDC_FAIL_FIRST_ATTEMPT": "1"}
    command = [sys.executable, "-m", "cdc_pipelines.cli", "decode", "--format", "oms-canal", "--out", str(out),
               "--topic", "t", "--dt", "2024-01-01", "--conf", "spark.sql.execution.arrow.maxRecordsPerBatch=100",
               "--conf", "spark.sql.files.maxPartitionBytes=40000", str(extract)]  # fmt: skip
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def _lake(spark, out: Path):
    events = spark.read.format("delta").load(str(out / "changes"))
    marked = sorted(
        (r.source_line, r.first)
        for r in events.join(
            events.select(F.col("event_id").alias("dup"), F.col("source_line").alias("first")),
            F.col("meta")["cdc.duplicate_of"] == F.col("dup"),
        ).collect()
    )
    rejects = sorted((r.source_line, r.reason) for r in spark.read.format("delta").load(str(out / "rejects")).collect())
    ids = sorted(r.event_id for r in events.select("event_id").collect())
    return ids, marked, rejects


def test_counts_rejects_and_marks_are_exact_when_tasks_are_retried(spark, tmp_path):
    extract = _extract(tmp_path / "orders.jsonl")
    counts, stderr = _decode_retried(extract, tmp_path / "retried")
    assert "CDC_FAIL_FIRST_ATTEMPT: first attempt of task" in stderr  # the failure did happen
    assert counts == {"read": 602, "decoded": 600, "rejected": 2, "filtered": 0, "events": 600}
    ids, marked, rejects = _lake(spark, tmp_path / "retried")
    assert len(ids) == len(set(ids)) == 600
    assert marked == [(601, 11), (602, 501)]
    assert [line for line, _ in rejects] == [100, 451]
    clean_counts = write_decoded(
        decode_files(spark, "oms-canal", [extract], topic="t", dt="2024-01-01"), tmp_path / "clean"
    )
    assert clean_counts == counts
    assert _lake(spark, tmp_path / "clean") == (ids, marked, rejects)
