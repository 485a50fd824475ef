"""`cdc-pipelines`: the library's commands, and `demo`, which runs the Dagster job over generated extracts.

The demo lives here because it needs the Dagster definitions; the library's command line takes it as
an added `Command`, so `cdc_pipelines` never imports `assets`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from cdc_pipelines import cli, spark


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--days", type=int, default=3, help="how many daily partitions (the last N days, ending yesterday UTC)"
    )
    parser.add_argument("--per-day", type=int, default=60, help="row events per day")
    parser.add_argument("--out", type=cli.path_argument, default="out/demo", help="output folder")


def _demo(args: argparse.Namespace) -> None:
    from assets.demo import run_demo

    if args.conf:  # the job's `pyspark` resource takes its settings from CDC_SPARK_CONF
        settings = spark.env_conf() | spark.parse_conf(args.conf)
        os.environ[spark.SPARK_CONF_ENV] = json.dumps(settings)
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


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, extra=[DEMO])


if __name__ == "__main__":
    sys.exit(main())
