"""The day-ready sensor over extract folders (no JVM): a day is requested when its `_SUCCESS` marker lands,
once; the skip reason names the topics a day still waits for; a day with a run is left alone by the sensor
and the schedule alike."""

import datetime as dt
import os
import time

import dagster as dg
import yaml

from assets.automation import SENSOR
from assets.graph import DAILY_JOB, build_definitions
from cdc_pipelines.extract.ready import SUCCESS_MARKER, folder_waits_for


def _defs(tmp_path, topics=("orders", "payments")):
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(yaml.safe_dump({"topics": [{"name": t, "format": "oms-canal"} for t in topics]}))
    return build_definitions(catalog, tmp_path / "raw", tmp_path / "lake")


def _tick(defs, instance, cursor=None):
    sensor = defs.resolve_sensor_def(SENSOR)
    context = dg.build_sensor_context(
        instance=instance, cursor=cursor, repository_def=defs.get_repository_def(), resources=defs.resources
    )
    return sensor.evaluate_tick(context)


def _extract(tmp_path, topic, day, marker=False):
    folder = tmp_path / "raw" / topic / f"dt={day}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part-0.jsonl").write_text("{}\n")
    if marker:
        (folder / SUCCESS_MARKER).write_text("")
    return folder


def test_a_files_day_is_requested_once_when_its_marker_lands(tmp_path, monkeypatch):
    monkeypatch.setenv("CDC_EXTRACT_SETTLE_MINUTES", "60")  # files just written: only a marker makes them ready
    yesterday = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
    defs = _defs(tmp_path)
    _extract(tmp_path, "orders", yesterday, marker=True)
    payments = _extract(tmp_path, "payments", yesterday)
    with dg.instance_for_test() as instance:
        waiting = _tick(defs, instance)
        assert not waiting.run_requests
        line = next(x for x in waiting.skip_message.splitlines() if x.startswith(yesterday))
        assert line.startswith(f"{yesterday} waits for payments: no {SUCCESS_MARKER} in ")
        (payments / SUCCESS_MARKER).write_text("")
        landed = _tick(defs, instance, waiting.cursor)
        assert [(r.partition_key, r.run_key) for r in landed.run_requests] == [(yesterday, yesterday)]
        again = _tick(defs, instance, landed.cursor)
        assert not again.run_requests and yesterday not in again.skip_message


def test_files_unchanged_for_the_settle_time_make_a_day_ready_without_a_marker(tmp_path):
    folder = _extract(tmp_path, "orders", "2026-11-30")
    assert "changed 0 of 30 minutes ago" in folder_waits_for(folder, 30)
    old = time.time() - 31 * 60
    os.utime(folder / "part-0.jsonl", (old, old))
    assert folder_waits_for(folder, 30) is None
    (folder / "_temporary").mkdir()  # hidden from the decode's listing (every part of a path): from the wait too
    (folder / "_temporary" / "part-1.jsonl").write_text("{}\n")
    assert folder_waits_for(folder, 30) is None
    assert folder_waits_for(tmp_path / "raw" / "orders" / "dt=2026-12-01", 30).startswith("no files in")


def test_a_day_that_has_a_run_is_left_alone_by_the_sensor_and_the_schedule(tmp_path):
    yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    day = yesterday.isoformat()
    defs = _defs(tmp_path, topics=("orders",))
    _extract(tmp_path, "orders", day, marker=True)
    schedule = defs.resolve_schedule_def(f"{DAILY_JOB}_schedule")
    at = dt.datetime.combine(yesterday + dt.timedelta(days=1), dt.time(2), dt.UTC)
    with dg.instance_for_test() as instance:
        instance.add_run(dg.DagsterRun(job_name=DAILY_JOB, tags={"dagster/partition": day}))  # the other one's run
        assert not [r for r in _tick(defs, instance).run_requests if r.partition_key == day]
        context = dg.build_schedule_context(instance=instance, scheduled_execution_time=at,
                                            repository_def=defs.get_repository_def())  # fmt: skip
        assert schedule.evaluate_tick(context).skip_message == f"{day} already ran"
