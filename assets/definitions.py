"""The Definitions `dagster dev` loads (see workspace.yaml): catalog.yaml over the demo's folders by default.

CDC_CATALOG, CDC_RAW_ROOT and CDC_LAKE_ROOT point it elsewhere.
"""

import os
from pathlib import Path

from assets.graph import build_definitions

ROOT = Path(__file__).resolve().parent.parent

defs = build_definitions(
    catalog=os.environ.get("CDC_CATALOG", str(ROOT / "catalog.yaml")),
    raw_root=os.environ.get("CDC_RAW_ROOT", str(ROOT / "out" / "demo" / "raw")),
    lake_root=os.environ.get("CDC_LAKE_ROOT", str(ROOT / "out" / "demo" / "lake")),
)
