"""Data-quality rules over the canonical change table, as Spark aggregations, and the report.

No Dagster here: the CLI and the asset checks both call these functions.
"""

from cdc_pipelines.quality.conservation import conservation_check
from cdc_pipelines.quality.images import image_presence_check
from cdc_pipelines.quality.keys import pk_consistency_check
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.report import write_quality_report
from cdc_pipelines.quality.result import RuleResult
from cdc_pipelines.quality.runner import (
    RULES,
    MissingPartitionError,
    check_partition,
    check_partition_rules,
    load_partition,
    run_all,
    run_rule,
)
from cdc_pipelines.quality.timestamps import timestamp_precision_check

__all__ = [
    "RULES",
    "MissingPartitionError",
    "Partition",
    "RuleResult",
    "Thresholds",
    "check_partition",
    "check_partition_rules",
    "conservation_check",
    "image_presence_check",
    "load_partition",
    "pk_consistency_check",
    "run_all",
    "run_rule",
    "timestamp_precision_check",
    "write_quality_report",
]
