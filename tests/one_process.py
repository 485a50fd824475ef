"""Several `cdc-pipelines` commands in one child process: one JVM start for all of them instead of one each.

For system tests that run the commands against settings the test's own session cannot take (another
master, S3 settings fixed at the session's start): what they check is what the commands write and print,
not that each ran in a process of its own. The child runs `cdc_pipelines.cli.commands.main` for each
command in order, in one SparkSession (the commands' `getOrCreate`), and stops at the first that fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import contextlib, io, json, sys
from cdc_pipelines.cli.commands import main

commands, probe = json.loads(sys.argv[1]), sys.argv[2]
results = []
for args in commands:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    sys.stderr.write(out.getvalue())
    lines = out.getvalue().strip().splitlines()
    results.append({"args": args, "code": code, "last": lines[-1] if lines else ""})
    if code != 0:
        break
probed = {}
if probe and all(r["code"] == 0 for r in results):
    exec(probe, probed)
print(json.dumps({"results": results, "probe": probed.get("result")}))
"""


def run_commands(
    commands: list[list[str]], env: dict, cwd: Path, log: Path, timeout: float, probe: str = ""
) -> tuple[list[dict], object]:
    """Each command's last stdout line (parsed JSON), in order, and what `probe` (Python run after the
    commands, in the same process) left in its variable `result`; fails the test on a command that exits
    non-zero, naming it."""
    out = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(commands), probe], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=timeout)  # fmt: skip
    log.write_text(out.stdout + out.stderr)
    assert out.returncode == 0, f"the commands' process failed:\n{out.stderr[-4000:]}"
    report = json.loads(out.stdout.strip().splitlines()[-1])
    for r in report["results"]:
        assert r["code"] == 0, f"{r['args'][0]} failed ({r['code']}):\n{out.stderr[-4000:]}"
    assert len(report["results"]) == len(commands)
    return [json.loads(r["last"]) for r in report["results"]], report["probe"]
