"""The one daily partitioning every asset shares (start date from CDC_START_DATE), and its backfill policy.

A backfill of a range runs as one run: each asset handles all the run's days in one pass.
"""

import os

import dagster as dg

DAILY = dg.DailyPartitionsDefinition(start_date=os.environ.get("CDC_START_DATE", "2024-01-01"))
SINGLE_RUN = dg.BackfillPolicy.single_run()
