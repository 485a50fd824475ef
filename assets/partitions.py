"""The one daily partitioning every asset shares (start date from CDC_START_DATE)."""

from __future__ import annotations

import os

import dagster as dg

DAILY = dg.DailyPartitionsDefinition(start_date=os.environ.get("CDC_START_DATE", "2024-01-01"))
