"""Reruns give the same table, never duplicates; a run killed while writing loses nothing committed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.encode.runner import encode_events, write_encoded
from cdc_pipelines.lake import io
from cdc_pipelines.lake.layout import CHANGES_DIR, REJECTS_DIR
from tests.killed import kill_once_files_land

ROOT = Path(__file__).parent.parent


def _extract(path: Path, n: int, first: int = 0, bad: int = 0) -> Path:
    lines = [
        json.dumps(
            {
                "allMetaData": {"db": "d", "table_name": "t", "timestamp": str(1700000000 + i)},
                "recordType": "INSERT",
                "postStruct": {"id": i, "v": f"value {i}"},
            }
        )
        for i in range(first, first + n)
    ]
    path.write_text("\n".join(lines + ["not json"] * bad) + "\n")
    return path


def _frozen(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _table(spark, root: Path, reader) -> list[tuple]:
    return sorted(_frozen(r.asDict(recursive=True)) for r in reader(spark, root).collect())


def _lake(spark, out: Path) -> tuple[list, list]:
    return _table(spark, out / CHANGES_DIR, io.read_canonical), _table(spark, out / REJECTS_DIR, io.read_rejects)


def _decode(spark, path: Path, out: Path, dt: str) -> dict:
    return write_decoded(decode_files(spark, "oms-default", [path], topic="t", dt=dt), out)


def test_rerunning_partitions_gives_the_same_rows_and_no_duplicates(spark, tmp_path):
    day1, day2 = _extract(tmp_path / "a.jsonl", 30, bad=2), _extract(tmp_path / "b.jsonl", 20, first=100)
    out = tmp_path / "lake"
    for day, path in (("2024-01-01", day1), ("2024-01-02", day2)):
        _decode(spark, path, out, day)
    first = _lake(spark, out)
    # the same range again
    for day, path in (("2024-01-01", day1), ("2024-01-02", day2)):
        _decode(spark, path, out, day)
    events, rejects = _lake(spark, out)
    assert (events, rejects) == first
    assert len(events) == 50 and len(rejects) == 2
    ids = [dict(e)["event_id"] for e in events]
    assert len(set(ids)) == len(ids)
    # a rerun whose input is now clean leaves no stale rejects behind
    _decode(spark, _extract(day1, 30), out, "2024-01-01")
    events, rejects = _lake(spark, out)
    assert events == first[0] and rejects == []


def _target_lines(target: Path) -> dict[str, list[str]]:
    out = {}
    for part in sorted(p for p in target.rglob("source_topic=*") if p.is_dir()):
        out[str(part.relative_to(target))] = [
            line for f in sorted(part.glob("part-*")) for line in f.read_text().splitlines()
        ]
    return out


def test_re_encoding_the_same_table_twice_writes_the_same_messages(spark, tmp_path):
    out = tmp_path / "lake"
    _decode(spark, _extract(tmp_path / "a.jsonl", 25), out, "2024-01-01")
    target = tmp_path / "targets" / "oms-canal"
    runs = []
    for _ in range(2):
        events = io.read_canonical(spark, out / CHANGES_DIR)
        counts = write_encoded(encode_events(events, "oms-canal"), target, "oms-canal")
        runs.append((counts, _target_lines(target)))
    assert runs[0] == runs[1]
    counts, lines = runs[0]
    assert counts["written"] == 25 and list(lines) == ["dt=2024-01-01/source_topic=t"]
    messages = lines["dt=2024-01-01/source_topic=t"]
    assert len(messages) == 25 and len(set(messages)) == 25


def test_skipped_events_are_kept_until_a_rerun_skips_none(spark, tmp_path):
    """An event the target cannot carry (a DDL, for Debezium) lands in `_skipped` with its reason; a run
    that skips none creates no `_skipped` table, and a rerun of the day that now skips none empties it."""
    out, target = tmp_path / "lake", tmp_path / "targets" / "oms-debezium"
    rows = _extract(tmp_path / "rows.jsonl", 5)
    ddl = {"allMetaData": {"db": "d", "table_name": "t", "timestamp": "1700000100"}, "recordType": "DDL",
           "postStruct": {"ddl": "ALTER TABLE t ADD c INT"}}  # fmt: skip
    with_ddl = tmp_path / "with-ddl.jsonl"
    with_ddl.write_text(rows.read_text() + json.dumps(ddl) + "\n")

    def encode_day(source: Path) -> dict[str, int]:
        _decode(spark, source, out, "2024-01-01")
        events = io.read_canonical(spark, out / CHANGES_DIR)
        return write_encoded(encode_events(events, "oms-debezium"), target, "oms-debezium")

    def skipped() -> list[tuple]:
        rows = spark.read.format(io.DELTA).load(str(target / "_skipped")).collect()
        return [(r.dt, r.source_topic, r.target, "no DDL event" in r.skip_reason) for r in rows]

    assert encode_day(rows) == {"written": 5, "skipped": 0, "encoded": 5}
    assert not (target / "_skipped").exists()
    assert encode_day(with_ddl) == {"written": 5, "skipped": 1, "encoded": 5}
    assert skipped() == [("2024-01-01", "t", "oms-debezium", True)]
    assert encode_day(rows) == {"written": 5, "skipped": 0, "encoded": 5}
    assert skipped() == []


@pytest.mark.system  # a whole decode in a JVM of its own, killed: run where no other test's JVM competes
def test_a_decode_killed_while_writing_keeps_the_committed_version(spark, tmp_path):
    """SIGKILL once the new data files are landing: the Delta log still ends at the committed version,
    so every reader (Spark, delta-rs) sees the committed rows; the next run commits over the debris."""
    out = tmp_path / "lake"
    _decode(spark, _extract(tmp_path / "v1.jsonl", 40), out, "2024-01-01")
    committed, version = _lake(spark, out), io.table_version(spark, out / CHANGES_DIR)
    bigger = _extract(tmp_path / "v2.jsonl", 5000)
    command = [sys.executable, "-m", "cdc_pipelines.cli", "decode", "--format", "oms-default", "--out", str(out)]
    command += ["--topic", "t", "--dt", "2024-01-01", str(bigger)]
    # a killed JVM leaves its scratch folder (its copy of the jars, about 700 MB) behind: here, not in /tmp
    command += ["--conf", f"spark.local.dir={tmp_path / 'spark-local'}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CDC_SPARK_MASTER": "local[1]"}
    kill_once_files_land(command, env, out / CHANGES_DIR)
    assert io.table_version(spark, out / CHANGES_DIR) == version
    assert _lake(spark, out) == committed
    assert DeltaTable(str(out / CHANGES_DIR)).to_pyarrow_table().num_rows == 40
    counts = _decode(spark, bigger, out, "2024-01-01")
    events, _ = _lake(spark, out)
    assert counts["events"] == len(events) == 5000
    assert io.table_version(spark, out / CHANGES_DIR) == version + 1
