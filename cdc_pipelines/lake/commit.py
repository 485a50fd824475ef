"""Replacing table partitions so that a killed run never loses or half-writes one.

Spark's dynamic partition overwrite deletes each partition folder and then renames the new files in;
a run killed between the two loses the partition. Here a run first writes everything into a staging
folder, `<table>/_commit/<run>/staged` (readers skip it: Spark ignores `_`-prefixed folders), then
writes a journal naming the partitions it replaces, then swaps each partition with two renames, the
old folder moved to `<run>/backup` first. The staged files are complete once the journal exists, so
a later run that finds a journal left by a killed one finishes that commit (roll forward); a staging
folder without a journal is an unfinished write and is deleted (the old partitions were never
touched). One writer per table at a time; local filesystem paths.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pyspark.sql import DataFrame

from cdc_pipelines.lake.partition_paths import partition_dir

COMMIT_DIR = "_commit"
JOURNAL = "journal.json"
STAGED = "staged"
BACKUP = "backup"


def replace_partitions(
    df: DataFrame,
    root: str | Path,
    partition_by: Sequence[str],
    *,
    text: bool = False,
    replace: Iterable[Mapping[str, str | None]] = (),
) -> None:
    """Write `df` partitioned under `root`, replacing the partitions it holds and those in `replace`.

    A partition named in `replace` that `df` has no rows for ends up absent (a rerun that now finds
    nothing to write leaves nothing stale behind).
    """
    run = new_run(root)
    writer = df.write.mode("overwrite").partitionBy(*partition_by)
    if text:
        writer.text(str(run / STAGED))
    else:
        writer.parquet(str(run / STAGED))
    commit_run(root, run, partition_by, replace)


def new_run(root: str | Path) -> Path:
    """A fresh commit folder under `root` (its staged files go to `run / STAGED`), after finishing or
    dropping what killed runs left."""
    root = Path(root)
    recover(root)
    return root / COMMIT_DIR / uuid.uuid4().hex


def commit_run(
    root: str | Path, run: Path, partition_by: Sequence[str], replace: Iterable[Mapping[str, str | None]] = ()
) -> None:
    """Journal the partitions `run` replaces (those staged and those in `replace`), then swap them in."""
    named = {partition_dir(values, partition_by) for values in replace}
    partitions = sorted(named | set(_partition_dirs(run / STAGED, len(partition_by))))
    run.mkdir(parents=True, exist_ok=True)
    tmp = run / (JOURNAL + ".tmp")
    tmp.write_text(json.dumps({"partitions": partitions}))
    os.replace(tmp, run / JOURNAL)
    _apply(Path(root), run, partitions)


def recover(root: str | Path) -> None:
    """Finish the commits a killed run journaled under `root`, and drop its unjournaled staging folders."""
    commits = Path(root) / COMMIT_DIR
    if not commits.is_dir():
        return
    for run in sorted(commits.iterdir()):
        journal = run / JOURNAL
        if journal.is_file():
            _apply(Path(root), run, json.loads(journal.read_text())["partitions"])
        else:
            shutil.rmtree(run, ignore_errors=True)
    _remove_if_empty(commits)


def _partition_dirs(staged: Path, depth: int) -> list[str]:
    if not staged.is_dir():
        return []
    pattern = "/".join(["*=*"] * depth)
    return [str(p.relative_to(staged)) for p in staged.glob(pattern) if p.is_dir()]


def _apply(root: Path, run: Path, partitions: list[str]) -> None:
    """Swap each partition in; every step can be repeated after a kill and ends in the same state."""
    for rel in partitions:
        live, staged, backup = root / rel, run / STAGED / rel, run / BACKUP / rel
        if live.exists() and not backup.exists():
            backup.parent.mkdir(parents=True, exist_ok=True)
            os.rename(live, backup)
        if staged.exists():
            live.parent.mkdir(parents=True, exist_ok=True)
            os.rename(staged, live)
        elif not live.exists():
            _remove_empty_parents(live.parent, root)
    (run / JOURNAL).unlink(missing_ok=True)
    shutil.rmtree(run, ignore_errors=True)
    _remove_if_empty(run.parent)


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _remove_if_empty(folder: Path) -> None:
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
