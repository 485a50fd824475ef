"""The snapshot benchmark: a quiet day of updates on a large table, at two table sizes.

Day 1 inserts `rows` rows of one canal topic; day 2 updates `updates` of them. Each day is decoded into
the lake and applied to the table's snapshots (`snapshot_days`), every step timed in this process.
What it shows is whether a day's snapshot cost follows the day's changes (it should: one MERGE of the
day's net effect into a table with deletion vectors) or the table's size (a full rewrite would).
With `tables` above 1 the same keys are spread over that many tables of the topic (`items_000`, ...),
as a whole-database topic carries them: the same day's data, so what grows is the per-table fixed cost.
After each day every current table is compared with the fold of the messages, so a faster day that is
wrong is not taken for a result. The messages are written from a template: encoding millions of events
would outlast the benchmark.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.run import snapshots_root
from cdc_pipelines.snapshots.store import CURRENT, table_root

DAYS = ("2024-01-01", "2024-01-02")
_EPOCH_MS = {DAYS[0]: 1704067200000, DAYS[1]: 1704153600000}
_TYPES = (
    '"pkNames":["id"],"isDdl":false,"sql":"",'
    '"mysqlType":{"id":"bigint","name":"varchar(32)","amount":"decimal(12,2)"},'
    '"sqlType":{"id":-5,"name":12,"amount":3}'
)


def table_of(key: int, tables: int) -> str:
    """The table a key belongs to: `items` alone, else `items_000`... with the keys dealt out in turn."""
    return "items" if tables == 1 else f"items_{(key - 1) % tables:03d}"


def _message(kind: str, key: int, ms: int, amount: str, tables: int, old: str = "null") -> str:
    data = f'[{{"id":"{key}","name":"item {key}","amount":"{amount}"}}]'
    return (
        f'{{"data":{data},"database":"bench","table":"{table_of(key, tables)}","type":"{kind}","es":{ms},'
        f'"ts":{ms + 7},"id":{key},"old":{old},{_TYPES}}}\n'
    )


def _amount(key: int, day: int) -> str:
    return f"{key % 100000}.{25 if day == 0 else 75}"


def updated_keys(rows: int, updates: int, seed: int = 7) -> list[int]:
    """The keys day 2 updates, in message order: distinct, drawn from 1..rows with a fixed seed."""
    return random.Random(seed).sample(range(1, rows + 1), updates)


def write_inserts(path: Path, rows: int, tables: int = 1) -> None:
    """Day 1: one INSERT message per key 1..rows, a millisecond apart."""
    base = _EPOCH_MS[DAYS[0]]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for key in range(1, rows + 1):
            out.write(_message("INSERT", key, base + key % 86_400_000, _amount(key, 0), tables))


def write_updates(path: Path, rows: int, updates: int, tables: int = 1, seed: int = 7) -> None:
    """Day 2: `updates` UPDATE messages of distinct keys drawn from 1..rows (`updated_keys`)."""
    base = _EPOCH_MS[DAYS[1]]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for n, key in enumerate(updated_keys(rows, updates, seed)):
            old = f'[{{"amount":"{_amount(key, 0)}"}}]'
            out.write(_message("UPDATE", key, base + n, _amount(key, 1), tables, old))


def expected_state(rows: int, updated: set[int], tables: int) -> dict[str, set[tuple[str, str, str]]]:
    """Each table's rows after the days (the fold of their messages): `(id, name, amount)` as text."""
    state: dict[str, set[tuple[str, str, str]]] = {}
    for key in range(1, rows + 1):
        row = (str(key), f"item {key}", _amount(key, 1 if key in updated else 0))
        state.setdefault(table_of(key, tables), set()).add(row)
    return state


def current_state(spark: SparkSession, lake: Path, names: Sequence[str]) -> dict[str, set[tuple[str, str, str]]]:
    """The rows of the current tables `names` (of database `bench`), read in one job."""
    root = snapshots_root(lake)
    frames: list[DataFrame] = [
        spark.read.format("delta").load(f"{table_root(root, 'bench', None, name)}/{CURRENT}")
        .select(F.lit(name).alias("t"), *[F.col(c).cast("string").alias(c) for c in ("id", "name", "amount")])
        for name in names
    ]  # fmt: skip
    state: dict[str, set[tuple[str, str, str]]] = {}
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    for r in union.collect():
        state.setdefault(r["t"], set()).add((r["id"], r["name"], r["amount"]))
    return state


def spark_jobs(spark: SparkSession) -> int:
    """How many Spark jobs the session has started: the scheduler's next job id (ids are handed out in turn)."""
    return int(spark.sparkContext._jsc.sc().dagScheduler().nextJobId())


def run_snapshot_bench(
    spark: SparkSession,
    work: Path,
    sizes: Sequence[int] = (1_000_000, 4_000_000),
    updates: int = 10_000,
    log: Callable[[str], None] = print,
    tables: int = 1,
) -> list[dict]:
    """For each table size: decode and snapshot day 1 (the inserts), then day 2 (the updates), the rows
    spread over `tables` tables; seconds of each step, the snapshot step's Spark jobs, rows and anomalies
    as the snapshot summary gives them, and whether every current table holds exactly the expected rows."""
    results = []
    for rows in sizes:
        folder = work / (f"snapshot-{rows}" + ("" if tables == 1 else f"-{tables}"))
        shutil.rmtree(folder, ignore_errors=True)
        lake = folder / "lake"
        write_inserts(folder / "raw" / DAYS[0] / "items.jsonl", rows, tables)
        write_updates(folder / "raw" / DAYS[1] / "items.jsonl", rows, updates, tables)
        updated: set[int] = set()
        for day in DAYS:
            source = folder / "raw" / day / "items.jsonl"
            start = time.perf_counter()
            counts = write_decoded(decode_files(spark, "oms-canal", [source], topic="items", dt=day), lake)
            decoded, jobs = time.perf_counter(), spark_jobs(spark)
            summary = snapshot_days(spark, lake, [day])[day]
            done, jobs = time.perf_counter(), spark_jobs(spark) - jobs
            updated = set(updated_keys(rows, updates)) if day == DAYS[1] else updated
            expected = expected_state(rows, updated, tables)
            result = {
                "table_rows": rows, "tables": tables, "day": day, "events": counts["events"],
                "decode_s": round(decoded - start, 1), "snapshot_s": round(done - decoded, 1), "snapshot_jobs": jobs,
                "rows_after": summary["rows"], "anomalies": summary["anomalies"],
                "state_exact": current_state(spark, lake, sorted(expected)) == expected,
            }  # fmt: skip
            log(json.dumps(result))
            results.append(result)
    return results


def render(results: list[dict]) -> str:
    """The Markdown table of `run_snapshot_bench`'s results, with the ratio its target is set as."""
    lines = [
        "| table rows | tables | day | events | decode s | snapshot s | snapshot / decode | snapshot jobs "
        "| rows after | anomalies | state exact |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ratio = r["snapshot_s"] / r["decode_s"] if r["decode_s"] else 0.0
        lines.append(
            f"| {r['table_rows']:,} | {r['tables']} | {r['day']} | {r['events']:,} | {r['decode_s']} | "
            f"{r['snapshot_s']} | {ratio:.2f} | {r['snapshot_jobs']} | {r['rows_after']:,} | {r['anomalies']} | "
            f"{'yes' if r['state_exact'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"
