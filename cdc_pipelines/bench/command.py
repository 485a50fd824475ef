"""`cdc-pipelines bench`: arguments, the quick and full configurations, and where results go."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cdc_pipelines.bench.config import FORMATS, BenchConfig

QUICK = BenchConfig(messages=5_000, scales=(1,), block_days=2, block_events_per_day=500, stages=False)


BENCH_HELP = "time decode and encode against the Spark floor, DuckDB and cat"


def add_arguments(bench: argparse.ArgumentParser) -> None:
    bench.add_argument("--quick", action="store_true", help=f"a smoke run: {QUICK.messages} messages, 1x only")
    bench.add_argument("--scale", type=int, nargs="+", help="input multiples of --messages (default 1 4 16)")
    bench.add_argument("--messages", type=int, help="messages per format at 1x (default 250000)")
    bench.add_argument("--formats", nargs="+", choices=FORMATS, help="formats to run (default: all five)")
    bench.add_argument("--scaled-formats", nargs="+", choices=FORMATS, help="only these above the smallest scale")
    bench.add_argument(
        "--out", type=os.path.abspath, default="out/bench", help="work folder: inputs, outputs and bench.json"
    )
    bench.add_argument(
        "--report", type=os.path.abspath, default="BENCHMARKS.md", help="Markdown file to write the tables into"
    )
    bench.add_argument(
        "--snapshots", type=int, nargs="+", metavar="ROWS",
        help="instead: the snapshot benchmark, a day of --updates updates on a canal table of each of ROWS rows",
    )  # fmt: skip
    bench.add_argument("--updates", type=int, default=10_000, help="updates of the snapshot benchmark's day 2")
    bench.add_argument(
        "--tables", type=int, default=1, help="the snapshot benchmark's rows spread over this many tables of the topic"
    )


def config_of(args: argparse.Namespace) -> BenchConfig:
    config = QUICK if args.quick else BenchConfig()
    given = {
        "scales": tuple(args.scale) if args.scale else None,
        "messages": args.messages,
        "formats": tuple(args.formats) if args.formats else None,
        "scaled_formats": tuple(args.scaled_formats) if args.scaled_formats else None,
    }
    return BenchConfig(**{**config.__dict__, **{k: v for k, v in given.items() if v is not None}})


def run(args: argparse.Namespace) -> dict:
    """Run the benchmark, write `out/bench.json` and the report; return a short summary."""
    from cdc_pipelines.bench.report import write_report
    from cdc_pipelines.bench.runner import run_bench
    from cdc_pipelines.runtime.progress import spark_progress
    from cdc_pipelines.runtime.session import full_jit, parse_conf, spark_session

    def save(result: dict) -> None:
        Path(args.out, "bench.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        write_report(result, Path(args.report))

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    spark = spark_session(conf=full_jit(parse_conf(args.conf)))
    if args.snapshots:
        return _snapshots(spark, args, log)
    with spark_progress(spark, "bench"):
        result = run_bench(spark, config_of(args), Path(args.out), log=log, progress=save)
    print(f"benchmark tables: {args.report}  measurements: {args.out}/bench.json", file=sys.stderr)
    return {"seconds": result["seconds"], "measurements": len(result["measurements"])}


def _snapshots(spark, args: argparse.Namespace, log) -> dict:
    """The snapshot benchmark (`bench.snapshot_days`): `out/snapshots.json` and `out/snapshots.md`."""
    from cdc_pipelines.bench.snapshot_days import render, run_snapshot_bench

    results = run_snapshot_bench(spark, Path(args.out), args.snapshots, args.updates, log=log, tables=args.tables)
    Path(args.out, "snapshots.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    Path(args.out, "snapshots.md").write_text(render(results), encoding="utf-8")
    print(render(results), file=sys.stderr)
    return {"results": len(results)}
