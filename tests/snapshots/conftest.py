from tests.snapshots.folds import fold_day

__all__ = ["fold_day"]
