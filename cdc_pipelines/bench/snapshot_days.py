"""The snapshot benchmark: a quiet day of updates on a large table, at two table sizes.

Day 1 inserts `rows` rows of one canal table; day 2 updates `updates` of them. Each day is decoded into
the lake and applied to the table's snapshots (`snapshot_days`), every step timed in this process.
What it shows is whether a day's snapshot cost follows the day's changes (it should: one MERGE of the
day's net effect into a table with deletion vectors) or the table's size (a full rewrite would).
The messages are written from a template: encoding millions of events would outlast the benchmark.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.snapshots import snapshot_days

DAYS = ("2024-01-01", "2024-01-02")
_EPOCH_MS = {DAYS[0]: 1704067200000, DAYS[1]: 1704153600000}
_TYPES = (
    '"pkNames":["id"],"isDdl":false,"sql":"",'
    '"mysqlType":{"id":"bigint","name":"varchar(32)","amount":"decimal(12,2)"},'
    '"sqlType":{"id":-5,"name":12,"amount":3}'
)


def _message(kind: str, key: int, ms: int, name: str, amount: str, old: str = "null") -> str:
    data = f'[{{"id":"{key}","name":"{name}","amount":"{amount}"}}]'
    return (
        f'{{"data":{data},"database":"bench","table":"items","type":"{kind}","es":{ms},"ts":{ms + 7},'
        f'"id":{key},"old":{old},{_TYPES}}}\n'
    )


def write_inserts(path: Path, rows: int) -> None:
    """Day 1: one INSERT message per key 1..rows, a millisecond apart."""
    base = _EPOCH_MS[DAYS[0]]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for key in range(1, rows + 1):
            out.write(_message("INSERT", key, base + key % 86_400_000, f"item {key}", f"{key % 100000}.25"))


def write_updates(path: Path, rows: int, updates: int, seed: int = 7) -> None:
    """Day 2: `updates` UPDATE messages of distinct keys drawn from 1..rows (a fixed seed)."""
    base = _EPOCH_MS[DAYS[1]]
    keys = random.Random(seed).sample(range(1, rows + 1), updates)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for n, key in enumerate(keys):
            old = f'[{{"amount":"{key % 100000}.25"}}]'
            out.write(_message("UPDATE", key, base + n, f"item {key}", f"{key % 100000}.75", old))


def run_snapshot_bench(
    spark: SparkSession,
    work: Path,
    sizes: Sequence[int] = (1_000_000, 4_000_000),
    updates: int = 10_000,
    log: Callable[[str], None] = print,
) -> list[dict]:
    """For each table size: decode and snapshot day 1 (the inserts), then day 2 (the updates); seconds
    of each step, rows and anomalies as the snapshot summary gives them."""
    results = []
    for rows in sizes:
        folder = work / f"snapshot-{rows}"
        shutil.rmtree(folder, ignore_errors=True)
        lake = folder / "lake"
        write_inserts(folder / "raw" / DAYS[0] / "items.jsonl", rows)
        write_updates(folder / "raw" / DAYS[1] / "items.jsonl", rows, updates)
        for day in DAYS:
            source = folder / "raw" / day / "items.jsonl"
            start = time.perf_counter()
            counts = write_decoded(decode_files(spark, "oms-canal", [source], topic="items", dt=day), lake)
            decoded = time.perf_counter()
            summary = snapshot_days(spark, lake, [day])[day]
            done = time.perf_counter()
            result = {
                "table_rows": rows, "day": day, "events": counts["events"],
                "decode_s": round(decoded - start, 1), "snapshot_s": round(done - decoded, 1),
                "rows_after": summary["rows"], "anomalies": summary["anomalies"],
            }  # fmt: skip
            log(json.dumps(result))
            results.append(result)
    return results


def render(results: list[dict]) -> str:
    """The Markdown table of `run_snapshot_bench`'s results, with the ratio the issue's target names."""
    lines = [
        "| table rows | day | events | decode s | snapshot s | snapshot / decode | rows after | anomalies |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ratio = r["snapshot_s"] / r["decode_s"] if r["decode_s"] else 0.0
        lines.append(
            f"| {r['table_rows']:,} | {r['day']} | {r['events']:,} | {r['decode_s']} | {r['snapshot_s']} | "
            f"{ratio:.2f} | {r['rows_after']:,} | {r['anomalies']} |"
        )
    return "\n".join(lines) + "\n"
