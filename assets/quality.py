"""Data-quality asset checks on `canonical_changes`, one per rule, each a call to cdc_pipelines.quality.

Conservation is blocking (ERROR): a partition that lost messages must not feed anything downstream.
The event rules WARN: a handful of odd events is worth a look, not a stopped pipeline. A run of
several days (a backfill) records each day's evaluation against its partition, then one summary
evaluation for the run that passes when every day passes.
"""

import dagster as dg
from dagster_pyspark import LazyPySparkResource

from assets.keys import CANONICAL
from assets.partitions import DAILY
from cdc_pipelines.quality import RuleResult, check_partition
from resources import LakeStorageResource, QualityConfigResource

DESCRIPTIONS = {
    "conservation_check": "messages read = decoded + rejected (recorded counts vs the lake); reject rate",
    "image_presence_check": "each op carries exactly the row images / DDL text it implies",
    "timestamp_precision_check": "event_time unit as promised and plausible; temporal values at their precision",
    "pk_consistency_check": "PK known, present, stable across updates, agrees with OMS metadata; unique event ids",
}


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


def check_result(result: RuleResult, severity: dg.AssetCheckSeverity) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=result.passed, severity=severity, metadata=rule_metadata(result))


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


def range_result(results: dict[str, RuleResult], severity: dg.AssetCheckSeverity) -> dg.AssetCheckResult:
    """The run's summary over its days: passed if all passed, with the days that failed."""
    return dg.AssetCheckResult(
        passed=all(r.passed for r in results.values()),
        severity=severity,
        metadata={
            "checked": sum(r.checked for r in results.values()),
            "failed": sum(r.failed for r in results.values()),
            "days": dg.MetadataValue.json(sorted(results)),
            "failed_days": dg.MetadataValue.json(sorted(dt for dt, r in results.items() if not r.passed)),
        },
    )


def _rule_check(rule: str, severity: dg.AssetCheckSeverity, blocking: bool) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=CANONICAL,
        name=rule,
        description=DESCRIPTIONS[rule],
        blocking=blocking,
        partitions_def=DAILY,
    )
    def _check(
        context: dg.AssetCheckExecutionContext,
        pyspark: LazyPySparkResource,
        storage: LakeStorageResource,
        quality: QualityConfigResource,
    ):
        """Yields the day's result; in a ranged run, each day's evaluation and then the run's summary."""
        results = {
            dt: check_partition(pyspark.spark_session, storage.lake_root, dt, rule, quality.thresholds())
            for dt in context.partition_keys
        }
        if context.has_partition_key:
            yield check_result(results[context.partition_key], severity)
            return
        for dt, result in results.items():
            yield day_evaluation(dg.AssetCheckKey(CANONICAL, rule), dt, result, severity, blocking)
        yield range_result(results, severity)

    return _check


conservation_check = _rule_check("conservation_check", dg.AssetCheckSeverity.ERROR, blocking=True)
image_presence_check = _rule_check("image_presence_check", dg.AssetCheckSeverity.WARN, blocking=False)
timestamp_precision_check = _rule_check("timestamp_precision_check", dg.AssetCheckSeverity.WARN, blocking=False)
pk_consistency_check = _rule_check("pk_consistency_check", dg.AssetCheckSeverity.WARN, blocking=False)

QUALITY_CHECKS = [conservation_check, image_presence_check, timestamp_precision_check, pk_consistency_check]
