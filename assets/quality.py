"""Data-quality asset checks on `canonical_changes`, one per rule, run together as one step that reads
each day once; the UI can still run any one of them alone.

The step computes the day's whole quality (`write_day_figures`: every rule, the event counts, volume, lag
and the GX suite: the rules share one read of the day, so one rule alone costs as much) and keeps it in the
day's report folder, so the report step renders it instead of reading the day again.

Conservation is blocking (ERROR): a partition that lost messages must not feed anything downstream.
The event rules WARN: a handful of odd events is worth a look, not a stopped pipeline. A run of
several days (a backfill) records each day's evaluation against its partition, then one summary
evaluation for the run that passes when every day passes.
"""

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.keys import CANONICAL
from assets.partitions import DAILY
from cdc_pipelines.engines.choice import QUALITY, Run, asked, engine_for
from cdc_pipelines.quality import RULES, RuleResult
from cdc_pipelines.quality.daily_report import write_day_figures
from resources import LakeStorageResource, QualityConfigResource

DESCRIPTIONS = {
    "conservation_check": "messages read = decoded + rejected (recorded counts vs the lake); reject rate",
    "image_presence_check": "each op carries exactly the row images / DDL text it implies",
    "timestamp_precision_check": "event_time unit as promised and plausible; temporal values at their precision",
    "pk_consistency_check": "PK known, present, stable across updates, agrees with OMS metadata; unique event ids",
}


def quality_engine(pyspark: LazyPySparkResource, lake: str):
    """The engine of the day's quality (`engines.choice`: `cdc.engine` among the resource's Spark settings)."""
    conf = {k: str(v) for k, v in pyspark.spark_config.items()}
    return engine_for(Run(QUALITY, lake, None, conf), asked(conf), lambda: pyspark.spark_session)


def rule_metadata(result: RuleResult) -> dict:
    """The rule's figures and failing examples as check metadata."""
    return {
        "checked": result.checked,
        "failed": result.failed,
        "failure_ratio": float(result.failure_ratio),
        "threshold": float(result.threshold),
        "checks": dg.MetadataValue.json(result.checks),
        "info": dg.MetadataValue.json(result.info),
        "groups": dg.MetadataValue.json(result.groups),
        "examples": dg.MetadataValue.json(result.examples),
    }


def day_evaluation(
    check_key: dg.AssetCheckKey, dt: str, result: RuleResult, severity: dg.AssetCheckSeverity, blocking: bool
) -> dg.AssetCheckEvaluation:
    """One day's evaluation inside a ranged run, recorded against that day's partition."""
    return dg.AssetCheckEvaluation(
        asset_key=check_key.asset_key,
        check_name=check_key.name,
        passed=result.passed,
        metadata=rule_metadata(result),
        severity=severity,
        blocking=blocking,
        partition=dt,
        target_materialization_data=None,
    )


def range_result(rule: str, results: dict[str, RuleResult], severity: dg.AssetCheckSeverity) -> dg.AssetCheckResult:
    """The run's summary over its days: passed if all passed, with the days that failed."""
    return dg.AssetCheckResult(
        asset_key=CANONICAL,
        check_name=rule,
        passed=all(r.passed for r in results.values()),
        severity=severity,
        metadata={
            "checked": sum(r.checked for r in results.values()),
            "failed": sum(r.failed for r in results.values()),
            "days": dg.MetadataValue.json(sorted(results)),
            "failed_days": dg.MetadataValue.json(sorted(dt for dt, r in results.items() if not r.passed)),
        },
    )


SEVERITY = {rule: dg.AssetCheckSeverity.WARN for rule in DESCRIPTIONS} | {
    "conservation_check": dg.AssetCheckSeverity.ERROR
}
SPECS = [
    dg.AssetCheckSpec(
        rule,
        asset=CANONICAL,
        description=DESCRIPTIONS[rule],
        blocking=SEVERITY[rule] == dg.AssetCheckSeverity.ERROR,
        partitions_def=DAILY,
    )
    for rule in RULES
]


@dg.multi_asset_check(specs=SPECS, can_subset=True, name="quality_checks")
def quality_checks(
    context: dg.AssetCheckExecutionContext,
    pyspark: LazyPySparkResource,
    storage: LakeStorageResource,
    quality: QualityConfigResource,
):
    """Every selected rule from one scan of each day (one step: the rules share the day's columns).

    Yields each rule's result for the day; in a ranged run, each day's evaluation and then the run's summary.
    """
    rules = [r for r in RULES if dg.AssetCheckKey(CANONICAL, r) in context.selected_asset_check_keys]
    lake, thresholds = storage.lake_root, quality.thresholds()
    engine = quality_engine(pyspark, lake)
    days = {}
    for dt in context.partition_keys:
        day = write_day_figures(engine, lake, dt, thresholds=thresholds, great_expectations=quality.data_docs)
        days[dt] = {r.rule: r for r in day.results}
    for rule in rules:
        severity, blocking = SEVERITY[rule], SEVERITY[rule] == dg.AssetCheckSeverity.ERROR
        if context.has_partition_key:
            result = days[context.partition_key][rule]
            yield dg.AssetCheckResult(
                asset_key=CANONICAL, check_name=rule, passed=result.passed, severity=severity,
                metadata=rule_metadata(result),
            )  # fmt: skip
            continue
        results = {dt: by_rule[rule] for dt, by_rule in days.items()}
        for dt, result in results.items():
            yield day_evaluation(dg.AssetCheckKey(CANONICAL, rule), dt, result, severity, blocking)
        yield range_result(rule, results, severity)


QUALITY_CHECKS = [quality_checks]
