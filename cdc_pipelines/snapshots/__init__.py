"""Table snapshots: per source table a current and a history (SCD2) Delta table, each day MERGEd in.

No Dagster here: the CLI and the `table_snapshots` asset both call `snapshot_days`. Its names load on first
use, so that the modules without Spark (`values`) import without pyspark.
"""

from __future__ import annotations

import importlib

__all__ = ["snapshot_days"]


def __getattr__(name: str):
    if name != "snapshot_days":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.run").snapshot_days
