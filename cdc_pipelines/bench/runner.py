"""One benchmark run: for each scale and format, every anchor and our decode and encode on one file.

Each step is timed on its own (wall clock) with the peak memory of the process tree sampled while it
runs; outputs are deleted as soon as they are no longer needed, so 16x fits on a small disk.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_pipelines.bench import anchors, data, replay, stages
from cdc_pipelines.bench.config import BenchConfig
from cdc_pipelines.bench.memory import PeakMemory
from cdc_pipelines.decode.pool import decode_with_processes, processes, splittable
from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.encode.runner import encode_events, write_encoded
from cdc_pipelines.lake.io import read_canonical
from cdc_pipelines.lake.layout import CHANGES_DIR
from cdc_pipelines.runtime.session import SPLIT_SETTING, balanced_splits

DECODE_STEPS = ("cat", "spark_floor", "spark_text_floor", "fastavro_floor", "duckdb_decode", "decode", "decode_replay",
                "decode_processes")  # fmt: skip
ENCODE_STEPS = ("encode", "encode_replay", "encode_floor", "duckdb_encode")
STEPS = DECODE_STEPS + ENCODE_STEPS


@dataclass
class Measurement:
    """One timed step: `records` lines (decode side) or events (encode side), `bytes` of JSON lines."""

    scale: int
    format_id: str
    step: str
    records: int
    bytes: int
    seconds: float
    peak_rss: dict[str, int]
    counts: dict[str, int] = field(default_factory=dict)


def _timed(run: Callable[[], object]) -> tuple[object, float, dict[str, int]]:
    with PeakMemory() as memory:
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
    return result, seconds, memory.peak


@contextmanager
def _split_size(spark: SparkSession, input_bytes: int) -> Iterator[None]:
    """The split size `runtime.session.balanced_splits` gives a decode of `input_bytes`, set while it runs
    (the floors keep Spark's own)."""
    if spark.sparkContext.getConf().contains(SPLIT_SETTING):  # the bench's --conf or CDC_SPARK_CONF set it
        split = None
    else:
        split = balanced_splits({"spark.master": spark.sparkContext.master}, input_bytes).get(SPLIT_SETTING)
    if split is None:
        yield
        return
    spark.conf.set(SPLIT_SETTING, split)
    try:
        yield
    finally:
        spark.conf.unset(SPLIT_SETTING)


def _folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and "_skipped" not in p.parts)


def bench_format(
    spark: SparkSession,
    format_id: str,
    messages: data.Messages,
    lines: int,
    scale: int,
    work: Path,
    threads: int,
    cuts: list[dict] | None = None,
) -> list[Measurement]:
    """Every step on one generated file of `lines` messages of `format_id`; with `cuts`, also the time
    of each stage of decode and encode (appended to `cuts`)."""
    work = work / f"{scale}x" / format_id
    shutil.rmtree(work, ignore_errors=True)
    source = work / "input" / "part-0.jsonl"
    size = messages.write(lines, source)["bytes"]
    done: list[Measurement] = []

    def measure(step: str, run: Callable[[], object], records: Callable[[object], int], size: int = size) -> object:
        result, seconds, peak = _timed(run)
        counts = result if isinstance(result, dict) else {}
        done.append(Measurement(scale, format_id, step, records(result), size, seconds, peak, counts))
        return result

    anchors.warm_up(spark, source, format_id, work / "warm")
    measure("cat", lambda: anchors.cat(source), lambda _r: lines)
    for step, floor_run in (("spark_floor", anchors.spark_floor), ("spark_text_floor", anchors.spark_text_floor)):
        floor = work / step
        measure(step, lambda run=floor_run, out=floor: run(spark, format_id, source, out), lambda _r: lines)
        done[-1].counts = {"rows_written": anchors.parquet_rows(floor)}
        shutil.rmtree(floor)
    if format_id == "dts-avro":
        read = measure("fastavro_floor", lambda: anchors.fastavro_floor(source, threads), lambda _r: lines)
        done[-1].counts = {"records_read": read}
    measure("duckdb_decode", lambda: anchors.duckdb_decode(source, work / "duckdb.parquet", threads), lambda _r: lines)
    done[-1].counts = {"rows_written": anchors.parquet_rows(work / "duckdb.parquet")}
    lake = work / "lake"
    topic = "bench"
    with _split_size(spark, size):  # as `cdc-pipelines decode` starts its session for this file
        decode = measure(
            "decode",
            lambda: write_decoded(decode_files(spark, format_id, [source], topic=topic, dt="2024-01-01"), lake),
            lambda r: r["read"],
        )
        replayed = work / "decode_replay"
        measure("decode_replay", replay.decode_replay(spark, format_id, source, replayed), lambda r: r["read"])
    shutil.rmtree(replayed)
    if splittable(str(source), format_id):  # what `cdc-pipelines decode` runs for this file on a local lake
        pooled = work / "lake_processes"
        run = partial(decode_with_processes, format_id, [str(source)], topic=topic, dt="2024-01-01", out=str(pooled),
                      workers=processes({}))  # fmt: skip
        if measure("decode_processes", run, lambda r: r["read"]) != decode:
            raise AssertionError(f"the pool's counts {done[-1].counts} differ from Spark's {decode} for {format_id}")
        shutil.rmtree(pooled)
    changes = lake / CHANGES_DIR
    target = work / "encoded"
    encode = measure(
        "encode",
        lambda: write_encoded(encode_events(read_canonical(spark, changes), format_id), target, format_id),
        lambda r: r["encoded"] + r["skipped"],
        size=0,
    )
    done[-1].bytes = _folder_bytes(target)
    replayed = work / "encode_replay"
    measure(
        "encode_replay",
        replay.encode_replay(spark, format_id, changes, replayed),
        lambda r: r["encoded"] + r["skipped"],
        size=0,
    )
    done[-1].bytes = _folder_bytes(replayed)
    shutil.rmtree(replayed)
    floor_text = work / "encode_floor"
    measure("encode_floor", lambda: anchors.encode_floor(spark, changes, floor_text), lambda _r: decode["events"])
    done[-1].bytes = _folder_bytes(floor_text)
    shutil.rmtree(floor_text)
    duck_json = work / "duckdb-encoded.jsonl"
    measure("duckdb_encode", lambda: anchors.duckdb_encode(changes, duck_json, threads), lambda _r: 0, size=0)
    done[-1].records = anchors.text_lines(duck_json)
    done[-1].bytes = duck_json.stat().st_size
    done[-1].counts = {"rows_written": done[-1].records}
    if encode["encoded"] + encode["skipped"] != decode["events"]:
        raise AssertionError(f"encode saw {encode} for {decode['events']} decoded events of {format_id}")
    if cuts is not None:
        for side, timed in (
            ("decode", stages.decode_cuts(spark, format_id, source, work / "cut")),
            ("encode", stages.encode_cuts(spark, format_id, changes, work / "cut")),
        ):
            cuts.append({"scale": scale, "format_id": format_id, "side": side, "cuts": timed})
    shutil.rmtree(work)
    return done


def run_bench(
    spark: SparkSession,
    config: BenchConfig,
    work: Path,
    log: Callable[[str], None] = print,
    progress: Callable[[dict], None] | None = None,
) -> dict:
    """Run every scale and format; return the machine, the config and every measurement.

    `progress` gets the result so far after each format, so a long run leaves its tables even if stopped.
    """
    threads = spark.sparkContext.defaultParallelism
    Path(work).mkdir(parents=True, exist_ok=True)
    events = data.block_events(config.block_days, config.block_events_per_day)
    blocks = {f: data.Messages(f, events, Path(work), config.block_days) for f in config.formats}
    measurements: list[Measurement] = []
    cuts: list[dict] = []
    started = time.time()
    result = {
        "machine": machine(threads),
        "config": asdict(config),
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)),
    }
    for scale in config.scales:
        for format_id in config.formats_at(scale):
            lines = config.messages * scale
            log(f"bench {scale}x {format_id}: {lines} messages")
            staged = cuts if config.stages and scale == min(config.scales) else None
            for m in bench_format(spark, format_id, blocks[format_id], lines, scale, Path(work), threads, staged):
                measurements.append(m)
                log(f"  {m.step:14s} {m.records:>10d} records {m.seconds:8.2f} s")
            result |= {
                "seconds": round(time.time() - started, 1),
                "load_avg_end": [round(x, 2) for x in os.getloadavg()],
                "measurements": [asdict(m) for m in measurements],
                "stages": cuts,
            }
            if progress is not None:
                progress(result)
    return result


def machine(spark_cores: int) -> dict:
    """Cores, memory and load of this machine (load: are others running?)."""
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    import pyspark

    return {
        "cores": os.cpu_count(),
        "spark_cores": spark_cores,
        "memory_gb": round(int(meminfo["MemTotal"].split()[0]) / 2**20, 1),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "pyspark": pyspark.__version__,
        "duckdb": __import__("duckdb").__version__,
    }
