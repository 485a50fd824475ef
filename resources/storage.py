"""Where raw extracts are read from and where the lake (canonical table, rejects, targets) lives."""

from __future__ import annotations

from pathlib import Path

import dagster as dg


class LakeStorageResource(dg.ConfigurableResource):
    """`raw_root/<topic>/dt=YYYY-MM-DD/` holds extracts; `lake_root` holds changes/, rejects/, targets/."""

    raw_root: str
    lake_root: str

    def raw_partition(self, topic: str, dt: str) -> Path:
        return Path(self.raw_root) / topic / f"dt={dt}"
