"""Where raw extracts are read from and where the lake (canonical table, rejects, targets) lives."""

from __future__ import annotations

import dagster as dg

from cdc_pipelines.runtime.storage import join


class LakeStorageResource(dg.ConfigurableResource):
    """`raw_root/<topic>/dt=YYYY-MM-DD/` holds extracts; `lake_root` holds changes/, rejects/, targets/.

    Both are local paths or URIs of any filesystem Spark reaches (`s3a://bucket/lake`, `oss://...`)."""

    raw_root: str
    lake_root: str

    def raw_partition(self, topic: str, dt: str) -> str:
        return join(self.raw_root, topic, f"dt={dt}")
