"""`cdc-pipelines`: the library's commands, plus `demo` and `bench-daily`, which run the Dagster job.

They live here because they need the Dagster definitions; the library's command line takes them as
added `Command`s, so `cdc_pipelines` never imports `assets`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cdc_pipelines.cli import commands as cli
from cdc_pipelines.runtime import session as spark


def _job_conf(args: argparse.Namespace) -> None:
    """The job's `pyspark` resource takes its settings from CDC_SPARK_CONF: the command's `--conf` go there."""
    if args.conf:
        settings = spark.env_conf() | spark.parse_conf(args.conf)
        os.environ[spark.SPARK_CONF_ENV] = json.dumps(settings)


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--days", type=int, default=3, help="how many daily partitions (the last N days, ending yesterday UTC)"
    )
    parser.add_argument("--per-day", type=int, default=60, help="row events per day")
    parser.add_argument("--out", type=cli.path_argument, default="out/demo", help="output folder")


def _demo(args: argparse.Namespace) -> None:
    from assets.demo import run_demo

    _job_conf(args)
    summary = run_demo(args.out, args.days, args.per_day)
    print(json.dumps(summary, indent=1), file=sys.stderr)
    print(f"canonical table: {summary['lake']}/changes  targets: {summary['targets']}")
    for day, result in summary["days"].items():
        print(f"quality report {day}: {result['report'] or 'not written (the run stopped before it)'}")
    print(f"table snapshots: {summary['snapshots']}")
    print(json.dumps({day: r["success"] for day, r in summary["days"].items()}))


DEMO = cli.Command(
    "demo", "generate sample extracts of every format and run the Dagster job on them", _demo_arguments, _demo
)


def _bench_daily_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--messages", type=int, default=200_000, help="canal messages a day (default: 200,000)")
    parser.add_argument("--out", type=cli.path_argument, default="out/bench-daily", help="work and result folder")
    parser.add_argument("--no-gx", action="store_true", help="leave the GX suite and Data Docs out of the report")


def _bench_daily(args: argparse.Namespace) -> None:
    from assets.daily_bench import render, run_daily_bench

    _job_conf(args)
    result = run_daily_bench(args.out, args.messages, data_docs=not args.no_gx)
    text = json.dumps(result, indent=1)
    Path(args.out, "daily.json").write_text(text + "\n", encoding="utf-8")
    Path(args.out, "daily.md").write_text(render(result), encoding="utf-8")
    print(text)
    print(render(result))
    print(f"written: {args.out}/daily.json {args.out}/daily.md", file=sys.stderr)


BENCH_DAILY = cli.Command(
    "bench-daily",
    "time each step of the daily Dagster job over two generated days of canal messages",
    _bench_daily_arguments,
    _bench_daily,
)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, extra=[DEMO, BENCH_DAILY])


if __name__ == "__main__":
    sys.exit(main())
