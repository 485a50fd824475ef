"""What starts the daily job: a sensor that runs a day once it is ready in every topic, and the 02:00 schedule.

The sensor looks at the last `LOOKBACK_DAYS` days and requests each one whose every topic is ready: a
Kafka topic when every partition is past the day's end plus its late seconds (`extract.kafka_plan.day_waits_for`,
the look-up the raw asset's read requires), an extract folder when its `_SUCCESS` marker is there or its
files stopped changing (`extract.ready`). Its cursor keeps the days it requested, so a day is requested
once; either way starts a day only when no run of it exists (`day_has_run`), and both use the day as the
run key, so the sensor and the schedule never run the same day twice.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import dagster as dg

from assets.partitions import DAILY
from cdc_pipelines.extract.catalog import Topic
from cdc_pipelines.extract.kafka_client import NativeLookup, check_settings
from cdc_pipelines.extract.kafka_days import KafkaDayError, day_bounds
from cdc_pipelines.extract.kafka_lookup import SparkLookup
from cdc_pipelines.extract.kafka_plan import day_waits_for
from cdc_pipelines.extract.kafka_source import KafkaSourceError
from cdc_pipelines.extract.ready import folder_waits_for, settle_minutes
from cdc_pipelines.runtime.storage import local_path
from resources import LakeStorageResource
from resources.spark import ProjectSparkResource

SENSOR = "day_ready_sensor"
LOOKBACK_DAYS = 7  # a day that gets ready later than this after its end is left to a backfill
PARTITION_TAG = "dagster/partition"


def day_has_run(instance: dg.DagsterInstance, job_name: str, day: str) -> bool:
    """Whether some run of `job_name` already ran (or runs) day `day` alone."""
    return bool(instance.get_run_ids(dg.RunsFilter(job_name=job_name, tags={PARTITION_TAG: day}), limit=1))


def topic_waits_for(topic: Topic, day: str, storage: LakeStorageResource, pyspark: ProjectSparkResource,
                    settle: float) -> str | None:  # fmt: skip
    """None when `topic`'s day is ready, else what it waits for."""
    if topic.kafka is None:
        folder = local_path(storage.raw_partition(topic.name, day))
        return folder_waits_for(folder, settle) if folder else f"{topic.name}'s extracts are not on this machine"
    try:
        bounds = day_bounds(day, topic.kafka.time_zone, topic.kafka.late_seconds)
        native = check_settings(topic.kafka) is None  # the native client's lookups need no JVM
        lookup = NativeLookup(topic.kafka) if native else SparkLookup(pyspark.spark_session, topic.kafka)
        return day_waits_for(lookup, topic.kafka, bounds)
    except (KafkaDayError, KafkaSourceError) as exc:
        return str(exc)


def day_ready_sensor(topics: Sequence[Topic], job: dg.UnresolvedAssetJobDefinition) -> dg.SensorDefinition:
    """The sensor over the catalog's `topics`, requesting `job`'s daily partitions."""

    @dg.sensor(name=SENSOR, job=job, minimum_interval_seconds=60,
               description="Runs a day of the daily job once every topic of the catalog has the day")  # fmt: skip
    def _day_ready(
        context: dg.SensorEvaluationContext, storage: LakeStorageResource, pyspark: ProjectSparkResource
    ) -> dg.SensorResult | dg.SkipReason:
        days = DAILY.get_partition_keys()[-LOOKBACK_DAYS:]
        requested = [d for d in json.loads(context.cursor or "[]") if d in days]
        settle, waiting, requests = settle_minutes(), [], []
        for day in days:
            if day in requested or day_has_run(context.instance, job.name, day):
                continue
            behind = {t.name: why for t in topics if (why := topic_waits_for(t, day, storage, pyspark, settle))}
            if behind:
                waiting.append(f"{day} waits for {', '.join(behind)}: " + "; ".join(behind.values()))
                continue
            requests.append(dg.RunRequest(run_key=day, partition_key=day))
            requested.append(day)
        if not requests:
            return dg.SkipReason("\n".join(waiting) or f"every day of the last {LOOKBACK_DAYS} was requested or ran")
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(sorted(requested)))

    return _day_ready


def daily_schedule(job: dg.UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    """Yesterday's day at 02:00 UTC, unless a run of it exists (the sensor's)."""

    @dg.schedule(name=f"{job.name}_schedule", cron_schedule="0 2 * * *", job=job, execution_timezone="UTC")
    def _daily(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
        day = (context.scheduled_execution_time.astimezone(dt.UTC) - dt.timedelta(days=1)).date().isoformat()
        if day_has_run(context.instance, job.name, day):
            return dg.SkipReason(f"{day} already ran")
        return dg.RunRequest(run_key=day, partition_key=day)

    return _daily
