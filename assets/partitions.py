"""The one daily partitioning every asset shares (start date from CDC_START_DATE), and its backfill policy.

A backfill of a range runs as one run: each asset handles all the run's days in one pass.
"""

import datetime as dt
import os
import warnings

import dagster as dg

# Every asset takes SINGLE_RUN, and every check DAILY: Dagster marks both beta/preview, and says so once per
# definition at import (27 warnings in the demo). The project pins Dagster's minor version (pyproject.toml)
# and its tests run these paths, so the warning tells a user nothing they can act on.
warnings.filterwarnings("ignore", r"Parameter `backfill_policy` of function `asset`", dg.BetaWarning)
warnings.filterwarnings("ignore", r"Specifying a partitions_def on an AssetCheckSpec", dg.PreviewWarning)

DEFAULT_WINDOW_DAYS = 30


def start_date(environ=os.environ, today: dt.date | None = None) -> str:
    """CDC_START_DATE, else 30 days before today (UTC): the demo writes the last few days, so they are on
    the partitions page and the page is a month long, not years of empty days. Real data sets the date."""
    if environ.get("CDC_START_DATE"):
        return dt.date.fromisoformat(environ["CDC_START_DATE"]).isoformat()
    today = today or dt.datetime.now(dt.UTC).date()
    return (today - dt.timedelta(days=DEFAULT_WINDOW_DAYS)).isoformat()


DAILY = dg.DailyPartitionsDefinition(start_date=start_date())
SINGLE_RUN = dg.BackfillPolicy.single_run()
