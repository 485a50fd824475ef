"""A snapshot lake run by either engine, so one test body holds both to a behaviour: the changes written
as that engine's decode writes them (delta-rs, or Spark's Delta), the days applied by `snapshot_days` on
it, and every table read back by delta-rs, the independent reader."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow.compute as pc
import pytest

from cdc_pipelines.lake import delta_rs
from cdc_pipelines.model.schema import CANONICAL_SCHEMA
from cdc_pipelines.snapshots import snapshot_days
from tests.snapshots.events import changes_arrow, changes_df


@dataclass
class SnapshotEngine:
    """`name` (`local` or `spark`) and its session (None on the local engine)."""

    name: str
    spark: object | None

    def write_changes(self, path: str | Path, events: list[dict]) -> None:
        """Replace the days and topics `events` hold in the changes table at `path`."""
        if self.spark is not None:
            from tests.lake.partitions import write_partitions

            write_partitions(changes_df(self.spark, events), path)
            return
        rows = changes_arrow(events)
        parts = rows.select(["dt", "source_topic"]).group_by(["dt", "source_topic"]).aggregate([]).to_pylist()
        for part in parts:
            own = rows.filter(pc.and_(pc.equal(rows["dt"], part["dt"]), pc.equal(rows["source_topic"],
                                                                                  part["source_topic"])))  # fmt: skip
            delta_rs.replace_partitions(own, str(path), [part], CANONICAL_SCHEMA, ("dt", "source_topic"))

    def lake(self, tmp_path: Path, events: list[dict]) -> Path:
        self.write_changes(tmp_path / "lake" / "changes", events)
        return tmp_path / "lake"

    def days(self, lake, dts, **options) -> dict[str, dict]:
        return snapshot_days(self.spark, lake, dts, **options)

    @contextmanager
    def spark_writes_every_table(self):
        """On Spark, its MERGEs with deletion vectors for every table (no small table by delta-rs)."""
        if self.spark is None:
            yield
            return
        from tests.snapshots.delta_rs import small_table_max_rows

        with small_table_max_rows(self.spark, 0):
            yield


@pytest.fixture(params=["local", pytest.param("spark", marks=pytest.mark.spark)])
def snapshot_engine(request) -> SnapshotEngine:
    """Each engine in turn: the local one in `scripts/test`, Spark in the Spark suite."""
    if request.param == "local":
        return SnapshotEngine("local", None)
    return SnapshotEngine("spark", request.getfixturevalue("spark"))
