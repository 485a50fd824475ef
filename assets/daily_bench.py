"""The daily job's benchmark: two days of canal messages through the real `daily_cdc` job, one
run per day, each step's wall seconds read from the run's own event log.

The library benchmarks time the library's calls; what an operator waits for is the run, which adds the
steps that read the day again (checks, report, targets, snapshots) and Dagster's own work between them.
Day 2 is the day to read: day 1 also pays for the JVM's start (in its first Spark step) and applies
snapshots to empty tables. The targets are set as ratios to the day's decode step (`LIMITS`).
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import dagster as dg
import yaml

from assets.graph import DAILY_JOB, build_definitions
from assets.keys import CANONICAL, REPORT, SNAPSHOTS
from assets.run_progress import run_with_step_lines
from cdc_pipelines.bench.data import message_block, moved
from cdc_pipelines.demo.extracts import canonical_events
from cdc_pipelines.model.canonical import MESSAGE_COUNTS

TOPIC, SOURCE, TARGET = "orders", "oms-canal", "oms-debezium"
CHUNK = 1000  # events per generator call: the demo generator is quadratic in a call's events
DAY_KEYS = 1_000_000_000  # day i's inserts take keys from i * DAY_KEYS on (INT range for two days)
# the daily run's targets, as ratios to the day's decode step (canonical_changes)
LIMITS = {"quality": 0.5, "snapshots": 0.75, "run": 2.5}
GROUPS = {"quality": "quality checks + report", "snapshots": "snapshots", "run": "whole run"}


def write_day(path: Path, day: dt.date, index: int, messages: int) -> int:
    """Exactly `messages` canal lines for `day`, chunk after chunk of demo events (every op, awkward
    values, 2% malformed lines). Each chunk takes keys of its own and is moved on by a millisecond per
    chunk, so no message repeats another (a repeat would be a redelivery to the decoder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written = chunk = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < messages:
            keys_from = index * DAY_KEYS + chunk * (CHUNK + 2) + 1  # + 2: order_items keys take n and n + 1
            events = list(canonical_events(day, CHUNK, seed=chunk, keys_from=keys_from))
            lines = message_block(SOURCE, moved(events, dt.timedelta(milliseconds=chunk)), path.parent)
            lines = lines[: messages - written]
            out.writelines(lines)
            written, chunk = written + len(lines), chunk + 1
    return written


def write_inputs(out: Path, days: list[dt.date], messages: int) -> Path:
    """Each day's extract under `out/raw`, and a catalog of the one topic (one target, snapshots on)."""
    for index, day in enumerate(days):
        write_day(out / "raw" / TOPIC / f"dt={day.isoformat()}" / "part-0.jsonl", day, index, messages)
    catalog = out / "catalog.yaml"
    topic = {"name": TOPIC, "format": SOURCE, "targets": [TARGET], "snapshot": True}
    catalog.write_text(yaml.safe_dump({"topics": [topic]}, sort_keys=False))
    return catalog


def _group(entry: dg.EventLogEntry) -> str | None:
    """Which figure a step's event puts the step in: decode, quality (canonical's checks and the
    report) or snapshots (the asset and its check); None for an event that says nothing of it."""
    event = entry.dagster_event
    if event is None:
        return None
    if event.is_step_materialization:
        key = event.asset_key
    elif event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
        key = event.event_specific_data.asset_key
        return {CANONICAL: "quality", SNAPSHOTS: "snapshots"}.get(key)
    else:
        return None
    return {CANONICAL: "decode", REPORT: "quality", SNAPSHOTS: "snapshots"}.get(key)


def run_figures(instance: dg.DagsterInstance, run_id: str) -> dict:
    """From the run's event log: each step's wall seconds (its STEP_START to its end), the whole run's
    (RUN_START to RUN_SUCCESS or RUN_FAILURE), and which steps make each figure."""
    steps = {
        s.step_key: round(s.end_time - s.start_time, 3)
        for s in instance.get_run_step_stats(run_id)
        if s.start_time is not None and s.end_time is not None
    }
    logs = instance.all_logs(run_id)
    at = {e.dagster_event.event_type: e.timestamp for e in logs if e.dagster_event and e.dagster_event.is_job_event}
    end = at.get(dg.DagsterEventType.RUN_SUCCESS, at.get(dg.DagsterEventType.RUN_FAILURE))
    groups: dict[str, set[str]] = {}
    for entry in logs:
        if entry.step_key and (group := _group(entry)):
            groups.setdefault(group, set()).add(entry.step_key)
    run = end - at[dg.DagsterEventType.RUN_START]
    return {
        "run_s": round(run, 3),
        "outside_steps_s": round(run - sum(steps.values()), 3),  # Dagster's own work: the steps run one by one
        "steps": steps,
        "groups": {g: sorted(keys) for g, keys in sorted(groups.items())},
    }


def ratios(day: dict) -> dict[str, float]:
    """The targets' figures of one day: quality checks + report, snapshots and the whole run over decode."""
    decode = sum(day["steps"][k] for k in day["groups"]["decode"])
    seconds = {g: sum(day["steps"][k] for k in day["groups"].get(g, [])) for g in ("quality", "snapshots")}
    return {g: round(s / decode, 3) for g, s in (seconds | {"run": day["run_s"]}).items()}


def run_daily_bench(out: str | Path, messages: int, data_docs: bool = True) -> dict:
    """Write two days of `messages` canal messages (the two days ending yesterday, UTC, inside the
    default partitions), then run the daily job for day 1 and for day 2 against a Dagster instance under
    `out/dagster_home` (so `dagster dev` there shows the runs). A fresh lake each time: day 1 is a first day."""
    out = Path(out).resolve()
    for folder in ("raw", "lake", "dagster_home"):
        shutil.rmtree(out / folder, ignore_errors=True)
    yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    days = [yesterday - dt.timedelta(days=1), yesterday]
    catalog = write_inputs(out, days, messages)
    job = build_definitions(catalog, out / "raw", out / "lake", data_docs).resolve_job_def(DAILY_JOB)
    results = []
    (out / "dagster_home").mkdir()
    with dg.DagsterInstance.local_temp(tempdir=str(out / "dagster_home")) as instance:
        for day in (d.isoformat() for d in days):
            run = run_with_step_lines(job, instance, partition_key=day, raise_on_error=False)
            if not run.success:  # the figures of a run that stopped part way measure nothing
                raise RuntimeError(f"the daily job failed on {day} (run {run.run_id}, {out / 'dagster_home'})")
            counts = {m.partition: m.metadata for m in run.asset_materializations_for_node(CANONICAL.path[-1])}
            figures = {"day": day, "run_id": run.run_id, "success": run.success, **run_figures(instance, run.run_id)}
            figures["decoded"] = {k: v.value for k, v in counts.get(day, {}).items() if k in MESSAGE_COUNTS}
            results.append(figures | {"ratios": ratios(figures)})
    return {
        "messages": messages, "topic": TOPIC, "format": SOURCE, "targets": [TARGET], "snapshots": True,
        "data_docs": data_docs, "limits": LIMITS, "days": results,
    }  # fmt: skip


def render(result: dict) -> str:
    """A Markdown table: every step's seconds on each day and its ratio to that day's decode, then the
    issue's three figures against their limits."""
    first, second = result["days"]
    decode = [sum(d["steps"][k] for k in d["groups"]["decode"]) for d in (first, second)]

    def row(name: str, seconds: tuple[float, float], ratio: tuple[float, float], limit: str = "") -> str:
        return f"| {name} | {seconds[0]:.2f} | {seconds[1]:.2f} | {ratio[0]:.2f} | {ratio[1]:.2f} | {limit} |"

    lines = [
        f"{result['messages']:,} {result['format']} messages a day, one topic, target {', '.join(result['targets'])},"
        f" snapshots on, GX Data Docs {'on' if result['data_docs'] else 'off'}; days {first['day']} and"
        f" {second['day']}, one run each.",
        "",
        "| step | day 1 s | day 2 s | day 1 / decode | day 2 / decode | target |",
        "|---|---|---|---|---|---|",
    ]
    for key in first["steps"]:
        seconds = (first["steps"][key], second["steps"].get(key, 0.0))
        lines.append(row(f"`{key}`", seconds, (seconds[0] / decode[0], seconds[1] / decode[1])))
    outside = (first["outside_steps_s"], second["outside_steps_s"])
    lines.append(row("outside any step", outside, (outside[0] / decode[0], outside[1] / decode[1])))
    for group, limit in LIMITS.items():
        if group == "run":
            seconds = (first["run_s"], second["run_s"])
        else:
            seconds = tuple(sum(d["steps"][k] for k in d["groups"].get(group, [])) for d in (first, second))
        met = "met" if second["ratios"][group] <= limit else "missed"
        name = f"**{GROUPS[group]}**"
        lines.append(row(name, seconds, (first["ratios"][group], second["ratios"][group]), f"<= {limit} ({met})"))
    return "\n".join(lines) + "\n"
