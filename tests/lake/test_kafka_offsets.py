"""The Kafka offsets table written and read with delta-rs (the local engine's Kafka day), without Spark: a day's
offsets per partition come back as written, a rerun's replace its day only, a day never read is none."""

from __future__ import annotations

from cdc_pipelines.lake.kafka_offsets import read_offsets, write_offsets
from cdc_pipelines.model.kafka_offsets import PartitionOffsets


def _offsets(start: int, messages: int) -> list[PartitionOffsets]:
    return [PartitionOffsets(p, start, start + messages, start + messages, start, start + messages - 1, messages,
                             1_000, 2_000) for p in (0, 1)]  # fmt: skip


def test_offsets_round_trip_and_a_rerun_replaces_its_day(tmp_path):
    lake = tmp_path / "lake"
    write_offsets(None, lake, "2026-11-01", "orders", "k-orders", _offsets(0, 5))
    write_offsets(None, lake, "2026-11-02", "orders", "k-orders", _offsets(5, 3))
    write_offsets(None, lake, "2026-11-01", "customers", "k-customers", _offsets(0, 1))
    write_offsets(None, lake, "2026-11-01", "orders", "k-orders", [_offsets(0, 4)[0]])  # a rerun, one partition
    assert read_offsets(None, lake, "2026-11-01", "orders") == ("k-orders", {0: _offsets(0, 4)[0]})
    assert read_offsets(None, lake, "2026-11-02", "orders") == ("k-orders", dict(enumerate(_offsets(5, 3))))
    assert read_offsets(None, lake, "2026-11-01", "customers")[0] == "k-customers"
    assert read_offsets(None, lake, "2026-11-03", "orders") == (None, {})
    assert read_offsets(None, tmp_path / "no-lake", "2026-11-01", "orders") == (None, {})
