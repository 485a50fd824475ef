"""Data-quality rules over the canonical change table, each written once in Python over Arrow batches of
events (`day`), and the report. An engine (`cdc_pipelines.engines`) reads the day and runs them.

No Dagster and no Spark here: the CLI and the asset checks both call these functions through an engine.
"""

from cdc_pipelines.quality.conservation import conservation_check
from cdc_pipelines.quality.day import RULES
from cdc_pipelines.quality.day_figures import DayQuality, MissingPartitionError
from cdc_pipelines.quality.partition import Partition, Thresholds
from cdc_pipelines.quality.report import write_quality_report
from cdc_pipelines.quality.result import RuleResult

__all__ = [
    "RULES",
    "DayQuality",
    "MissingPartitionError",
    "Partition",
    "RuleResult",
    "Thresholds",
    "conservation_check",
    "write_quality_report",
]
