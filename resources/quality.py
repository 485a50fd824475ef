"""Thresholds of the data-quality asset checks: configuration only, the rules live in cdc_pipelines.quality."""

from __future__ import annotations

import datetime as dt

import dagster as dg

from cdc_pipelines.quality import Thresholds


class QualityConfigResource(dg.ConfigurableResource):
    """Max failure ratio of the event rules, max reject rate, clock tolerances in minutes, and whether the
    day's quality runs the Great Expectations suite and writes its Data Docs for the report (in the checks
    step when it runs every rule, else in the report step; about 1-3 s a day once GX is imported)."""

    max_failure_ratio: float = 0.0
    max_reject_rate: float = 0.05
    future_tolerance_minutes: float = 5.0
    sync_tolerance_minutes: float = 5.0
    data_docs: bool = True

    def thresholds(self) -> Thresholds:
        return Thresholds(
            max_failure_ratio=self.max_failure_ratio,
            max_reject_rate=self.max_reject_rate,
            future_tolerance=dt.timedelta(minutes=self.future_tolerance_minutes),
            sync_tolerance=dt.timedelta(minutes=self.sync_tolerance_minutes),
        )
