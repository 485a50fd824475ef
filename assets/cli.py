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
from cdc_pipelines.runtime.storage import absolute


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
    parser.add_argument("--out", type=absolute, default="out/demo", help="output folder")
    parser.add_argument("--json", action="store_true", help="print the run's summary as JSON, not as the per-day table")


DAGSTER = os.path.join(os.path.dirname(sys.executable), "dagster")  # this environment's `dagster` command


def _shown(path: str) -> str:
    """`path` relative to the working directory when it is under it: what a person copies to open it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def demo_table(summary: dict) -> list[str]:
    """The demo's result for a person: where things are, then per day the messages read, decoded and
    rejected, each check's verdict and the quality report's path."""
    days = summary["days"]
    checks = list(dict.fromkeys(c for day in days.values() for c in day["checks"]))
    header = ["day", "read", "decoded", "rejected", *(c.removesuffix("_check") for c in checks), "report"]
    rows = [
        [day, *(str(r.get(k, "-")) for k in ("read", "decoded", "rejected")),
         *({True: "pass", False: "FAIL"}.get(r["checks"].get(c), "-") for c in checks),
         _shown(r["report"]) if r["report"] else "not written"]
        for day, r in days.items()
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        f"canonical table: {_shown(summary['lake'])}/changes  targets: {_shown(summary['targets'])}"
        f"  snapshots: {_shown(summary['snapshots'])}",
        f"the runs in the UI: DAGSTER_HOME={_shown(summary['dagster_home'])} {_shown(DAGSTER)} dev",
    ]
    if summary["failure"]:
        failed = summary["failure"]
        lines.append(f"the run FAILED at step {failed['step']}: {failed['error']}")
        lines.append(
            f"  its events: run {failed['run_id']} in the UI above; Spark's log: {_shown(failed['spark_log'])}"
        )
    return lines + ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]


def _demo(args: argparse.Namespace) -> None:
    from assets.demo import run_demo

    _job_conf(args)
    summary = run_demo(args.out, args.days, args.per_day)
    print(json.dumps(summary, indent=1) if args.json else "\n".join(demo_table(summary)))
    if summary["failure"] is not None:
        raise SystemExit(1)  # after the table, which says where and why


DEMO = cli.Command(
    "demo", "generate sample extracts of every format and run the Dagster job on them", _demo_arguments, _demo
)


def _bench_daily_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--messages", type=int, default=200_000, help="canal messages a day (default: 200,000)")
    parser.add_argument("--out", type=absolute, default="out/bench-daily", help="work and result folder")
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
