from tests.snapshots.folds import fold_day
from tests.snapshots.lakes import snapshot_engine

__all__ = ["fold_day", "snapshot_engine"]
