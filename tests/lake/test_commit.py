"""Partition replacement: staged, journaled, swapped; a commit cut short is finished by the next run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cdc_pipelines.lake import commit
from cdc_pipelines.lake.partition_paths import escape_value, partition_dir, unescape_value

PARTS = ("dt", "source_topic")


def _table(spark, rows):
    return spark.createDataFrame(rows, "id long, dt string, source_topic string")


def _read(spark, root: Path) -> list[tuple]:
    return sorted(tuple(r) for r in spark.read.parquet(str(root)).select("id", "dt", "source_topic").collect())


def _dirs(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())


def test_folder_names_match_spark_and_never_leave_the_root(spark, tmp_path):
    topics = ["../../etc", "a/b=c", "x%2Fy", "tab\tquote'\"#?*:[]^{}\\"]
    commit.replace_partitions(_table(spark, [(i, "2024-01-01", t) for i, t in enumerate(topics)]), tmp_path, PARTS)
    expected = sorted(partition_dir({"dt": "2024-01-01", "source_topic": t}, PARTS) for t in topics)
    assert _dirs(tmp_path) == ["dt=2024-01-01", *expected]
    assert [unescape_value(escape_value(t)) for t in topics] == topics
    assert sorted(r[2] for r in _read(spark, tmp_path)) == sorted(topics)


def test_only_the_named_partitions_are_replaced(spark, tmp_path):
    commit.replace_partitions(_table(spark, [(1, "d1", "a"), (2, "d1", "b"), (3, "d2", "a")]), tmp_path, PARTS)
    commit.replace_partitions(_table(spark, [(4, "d1", "a")]), tmp_path, PARTS)
    assert _read(spark, tmp_path) == [(2, "d1", "b"), (3, "d2", "a"), (4, "d1", "a")]
    # a rerun that finds nothing for a partition it owns leaves nothing stale behind
    commit.replace_partitions(_table(spark, []), tmp_path, PARTS, replace=[{"dt": "d2", "source_topic": "a"}])
    assert _read(spark, tmp_path) == [(2, "d1", "b"), (4, "d1", "a")]
    assert not (tmp_path / "dt=d2").exists() and not (tmp_path / commit.COMMIT_DIR).exists()


def test_a_commit_killed_between_its_renames_is_finished_by_the_next_run(spark, tmp_path, monkeypatch):
    commit.replace_partitions(_table(spark, [(1, "d1", "a"), (2, "d1", "b")]), tmp_path, PARTS)
    real_rename, calls = os.rename, []

    def dies_on_fourth_rename(src, dst):
        calls.append(src)
        if len(calls) == 4:
            raise KeyboardInterrupt("killed")
        real_rename(src, dst)

    monkeypatch.setattr(commit.os, "rename", dies_on_fourth_rename)
    with pytest.raises(KeyboardInterrupt):
        commit.replace_partitions(_table(spark, [(10, "d1", "a"), (20, "d1", "b")]), tmp_path, PARTS)
    monkeypatch.setattr(commit.os, "rename", real_rename)
    # partition a is swapped, b sits in the backup: the journal says how to finish
    assert [p.name for p in (tmp_path / commit.COMMIT_DIR).glob(f"*/{commit.JOURNAL}")] == [commit.JOURNAL]
    commit.recover(tmp_path)
    assert _read(spark, tmp_path) == [(10, "d1", "a"), (20, "d1", "b")]
    assert not (tmp_path / commit.COMMIT_DIR).exists()


def test_staging_without_a_journal_is_dropped_and_the_old_data_kept(spark, tmp_path):
    commit.replace_partitions(_table(spark, [(1, "d1", "a")]), tmp_path, PARTS)
    unfinished = tmp_path / commit.COMMIT_DIR / "run" / commit.STAGED / "dt=d1" / "source_topic=a"
    unfinished.mkdir(parents=True)
    (unfinished / "part-0.parquet").write_bytes(b"half a file")
    assert _read(spark, tmp_path) == [(1, "d1", "a")]
    commit.recover(tmp_path)
    assert not (tmp_path / commit.COMMIT_DIR).exists()
    assert _read(spark, tmp_path) == [(1, "d1", "a")]
