"""Table snapshots: each source table's state at the end of every day, folded from its changes in Spark.

No Dagster here: the CLI and the `table_snapshots` asset both call `snapshot_days`.
"""

from cdc_pipelines.snapshots.apply import Applied, apply_day
from cdc_pipelines.snapshots.run import snapshot_days

__all__ = ["Applied", "apply_day", "snapshot_days"]
