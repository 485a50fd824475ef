"""Table snapshots: per source table a current and a history (SCD2) Delta table, each day MERGEd in.

No Dagster here: the CLI and the `table_snapshots` asset both call `snapshot_days`.
"""

from cdc_pipelines.snapshots.apply import Applied, apply_day
from cdc_pipelines.snapshots.run import snapshot_days

__all__ = ["Applied", "apply_day", "snapshot_days"]
