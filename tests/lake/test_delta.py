"""The lake as Delta tables: read by delta-rs with the commands' counts, a rerun one version up with the
same rows, time travel, writers of different partitions side by side, writers of one partition in
conflict, and an old Parquet lake converted in place."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pyarrow.compute as pc
import pytest
from deltalake import DeltaTable
from pyspark.sql import functions as F

from cdc_pipelines.cli.commands import main
from cdc_pipelines.lake import io
from cdc_pipelines.lake.convert import convert_lake
from cdc_pipelines.lake.run_counts import read_counts
from cdc_pipelines.model.schema import CANONICAL_SCHEMA

SEEDS = Path(__file__).parent.parent.parent / "cdc_pipelines" / "samples"


def _messages(path: Path, n: int, bad: int = 0) -> Path:
    lines = [
        json.dumps({"allMetaData": {"db": "d", "table_name": "t", "timestamp": str(1700000000 + i)},
                    "recordType": "INSERT", "postStruct": {"id": i, "v": f"v{i}"}})
        for i in range(n)
    ]  # fmt: skip
    path.write_text("\n".join(lines + ["not json"] * bad) + "\n")
    return path


def _decode(out: Path, path: Path, topic: str, dt: str, capsys) -> dict:
    args = ["decode", "--format", "oms-default", "--out", str(out), "--topic", topic, "--dt", dt, str(path)]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def _delta_rs_counts(out: Path, table: str, topic: str, dt: str) -> int:
    rows = DeltaTable(str(out / table)).to_pyarrow_table()
    mask = pc.and_(pc.equal(rows["dt"], dt), pc.equal(rows["source_topic"], topic))
    return rows.filter(mask).num_rows


def test_decode_writes_delta_tables_that_delta_rs_reads_and_a_rerun_is_one_version_up(spark, tmp_path, capsys):
    out, extract = tmp_path / "lake", _messages(tmp_path / "m.jsonl", 7, bad=2)
    summary = _decode(out, extract, "orders", "2024-03-01", capsys)
    assert summary == {"read": 9, "decoded": 7, "rejected": 2, "filtered": 0, "events": 7}
    for table, expected in (("changes", 7), ("rejects", 2), ("counts", 1)):
        assert _delta_rs_counts(out, table, "orders", "2024-03-01") == expected
    assert DeltaTable(str(out / "changes")).metadata().partition_columns == ["dt", "source_topic"]
    versions = {t: io.table_version(spark, out / t) for t in ("changes", "rejects", "counts")}

    assert _decode(out, extract, "orders", "2024-03-01", capsys) == summary
    for table, expected in (("changes", 7), ("rejects", 2), ("counts", 1)):
        assert _delta_rs_counts(out, table, "orders", "2024-03-01") == expected
        assert io.table_version(spark, out / table) == versions[table] + 1
        assert DeltaTable(str(out / table)).version() == versions[table] + 1  # delta-rs: the same version
    assert read_counts(spark, out, "2024-03-01") == {"orders": summary}
    # the version before the rerun is still readable, with the same rows
    old = io.read_canonical(spark, out / "changes", version=versions["changes"])
    assert old.count() == io.read_canonical(spark, out / "changes").count() == 7


def test_a_rerun_with_fewer_messages_leaves_nothing_stale_and_keeps_other_partitions(spark, tmp_path, capsys):
    out = tmp_path / "lake"
    _decode(out, _messages(tmp_path / "a.jsonl", 5), "a", "2024-03-01", capsys)
    _decode(out, _messages(tmp_path / "b.jsonl", 3, bad=1), "b", "2024-03-01", capsys)
    _decode(out, _messages(tmp_path / "b2.jsonl", 2), "b", "2024-03-01", capsys)
    assert _delta_rs_counts(out, "changes", "a", "2024-03-01") == 5
    assert _delta_rs_counts(out, "changes", "b", "2024-03-01") == 2
    assert _delta_rs_counts(out, "rejects", "b", "2024-03-01") == 0


def _rows(spark, topic: str, dt: str, n: int, gate: Path | None = None, started: Path | None = None):
    """`n` canonical rows of one partition; with `gate`, the task (one: the rows in one partition) touches
    `started`, then waits for `gate` to exist, so two writes can be held inside their transactions until
    both have started."""

    def wait(batches):
        if started is not None:
            started.touch()
        while gate is not None and not gate.exists():
            time.sleep(0.05)
        yield from batches

    ids = spark.range(n) if gate is None else spark.range(0, n, 1, 1)  # one task per writer: both run at once
    base = ids.select(
        F.concat(F.lit(f"{topic}-"), F.col("id").cast("string")).alias("event_id"),
        F.lit("oms-default").alias("source_format"), F.lit(topic).alias("source_topic"),
        F.lit("f").alias("source_file"), F.col("id").alias("source_line"), F.lit("INSERT").alias("op"),
        F.lit(dt).alias("dt"),
    )  # fmt: skip
    full = base.select(*[F.col(f.name) if f.name in base.columns else F.lit(None).cast(f.dataType).alias(f.name)
                         for f in CANONICAL_SCHEMA.fields])  # fmt: skip
    return full.mapInArrow(wait, full.schema)


def _write_at_once(spark, path: Path, jobs: list[tuple[str, str, int]], gate: Path) -> list[object]:
    results: list[object] = [None] * len(jobs)
    started = [gate.with_name(f"{gate.name}.started-{i}") for i in range(len(jobs))]

    def run(i: int, topic: str, dt: str, n: int) -> None:
        try:
            spark.sparkContext.setLocalProperty("spark.scheduler.pool", f"p{i}")
            frame = _rows(spark, topic, dt, n, gate, started[i])
            results[i] = io.replace_partitions(frame, path, [{"dt": dt, "source_topic": topic}])
        except Exception as error:  # noqa: BLE001 - the test looks at which writer failed, and how
            results[i] = error

    threads = [threading.Thread(target=run, args=(i, *job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    # a writer's task runs inside its transaction (Delta read the table before the job that runs it):
    # once every writer's task has started, both transactions have read the table and wait in their tasks
    deadline = time.monotonic() + 120
    try:
        while not all(s.exists() for s in started):
            if time.monotonic() > deadline or not any(t.is_alive() for t in threads):
                raise AssertionError(f"the writers' tasks did not all start: {results}")
            time.sleep(0.05)
    finally:
        gate.touch()
    for thread in threads:
        thread.join(120)
    return results


def test_writers_of_different_partitions_both_commit(spark, tmp_path):
    path = tmp_path / "changes"
    first = io.replace_partitions(_rows(spark, "x", "2024-01-01", 1), path, [{"dt": "2024-01-01", "source_topic": "x"}])
    results = _write_at_once(spark, path, [("a", "2024-01-01", 30), ("b", "2024-01-02", 20)], tmp_path / "go")
    assert all(isinstance(r, io.Commit) for r in results), results
    assert sorted(r.version for r in results) == [first.version + 1, first.version + 2]
    table = DeltaTable(str(path)).to_pyarrow_table()
    assert sorted(pc.value_counts(table["source_topic"]).to_pylist(), key=lambda c: c["values"]) == [
        {"values": "a", "counts": 30}, {"values": "b", "counts": 20}, {"values": "x", "counts": 1},
    ]  # fmt: skip


def test_writers_of_the_same_partition_conflict_loudly_and_one_wins_whole(spark, tmp_path):
    path = tmp_path / "changes"
    io.replace_partitions(_rows(spark, "a", "2024-01-01", 1), path, [{"dt": "2024-01-01", "source_topic": "a"}])
    results = _write_at_once(spark, path, [("a", "2024-01-01", 30), ("a", "2024-01-01", 20)], tmp_path / "go")
    won = [r for r in results if isinstance(r, io.Commit)]
    lost = [r for r in results if isinstance(r, Exception)]
    assert len(won) == 1 and len(lost) == 1, results
    assert isinstance(lost[0], io.PartitionConflictError)
    assert "another run replaced the same partitions" in str(lost[0])
    rows = DeltaTable(str(path)).to_pyarrow_table().num_rows
    assert rows == (30 if results[0] is won[0] else 20)  # the winner's rows, none of the loser's


def test_an_old_parquet_lake_converts_in_place(spark, tmp_path):
    lake = tmp_path / "lake"
    rows = _rows(spark, "a/b", "2024-01-01", 4).unionByName(_rows(spark, "c", "2024-01-02", 3))
    rows.write.partitionBy("dt", "source_topic").parquet(str(lake / "changes"))
    assert (lake / "changes" / "dt=2024-01-01" / "source_topic=a%2Fb").is_dir()
    counts = lake / "counts" / "dt=2024-01-01" / "source_topic=a%2Fb" / "counts.json"
    counts.parent.mkdir(parents=True)
    counts.write_text(json.dumps({"read": 4, "decoded": 4, "rejected": 0, "events": 4}))

    assert main(["convert-lake", str(lake)]) == 0
    table = DeltaTable(str(lake / "changes")).to_pyarrow_table()
    assert sorted(pc.value_counts(table["source_topic"]).to_pylist(), key=lambda c: c["values"]) == [
        {"values": "a/b", "counts": 4}, {"values": "c", "counts": 3},
    ]  # fmt: skip
    recorded = {"a/b": {"read": 4, "decoded": 4, "rejected": 0, "filtered": 0, "events": 4}}
    assert read_counts(spark, lake, "2024-01-01") == recorded
    assert convert_lake(spark, str(lake)) == {"changes": 0, "rejects": None, "counts_files": 0}  # idempotent
    assert io.read_canonical(spark, lake / "changes").where(F.col("source_topic") == "a/b").count() == 4


def test_partition_predicate_quotes_values():
    predicate = io.partition_predicate([{"dt": "2024-01-01", "source_topic": "it's\\x"}], ("dt", "source_topic"))
    assert predicate == "(`dt` = '2024-01-01' AND `source_topic` IN ('it\\'s\\\\x'))"
    with pytest.raises(KeyError):
        io.partition_predicate([{"dt": "2024-01-01"}], ("dt", "source_topic"))


def test_a_catalog_database_names_the_tables(spark, tmp_path):
    path = str(tmp_path / "changes")
    spark.conf.set(io.CATALOG_DATABASE, "cdc_test")
    try:
        io.replace_partitions(_rows(spark, "a", "2024-01-01", 3), path, [{"dt": "2024-01-01", "source_topic": "a"}],
                              register_as="changes")  # fmt: skip
    finally:
        spark.conf.unset(io.CATALOG_DATABASE)
    assert spark.table("cdc_test.changes").count() == 3
    assert spark.sql("DESCRIBE DETAIL cdc_test.changes").first()["format"] == "delta"
