"""The day's events as schema changes and routes leave them (`event_rewrite`), against the same rewrite in
plain Python, on map arrays sliced out of a batch and holding null images (as a batch of a Spark task is)."""

import itertools

import numpy as np
import pyarrow as pa
import pytest

from cdc_pipelines.snapshots.event_rewrite import only_columns, with_entry

MAPS = [[("a", "1"), ("b", "2")], None, [], [("c", "3")], [("a", "4"), ("c", None)], None, [("b", "5")]]
TEXT_MAP = pa.map_(pa.string(), pa.string())


def _sliced(offset: int) -> pa.MapArray:
    return pa.array(MAPS, TEXT_MAP).slice(offset)


@pytest.mark.parametrize("offset, marks", list(itertools.product(range(3), ["all", "none", "odd"])))
def test_an_entry_goes_first_in_each_marked_present_map(offset, marks):
    maps = _sliced(offset)
    rows = {"all": np.ones(len(maps), bool), "none": np.zeros(len(maps), bool),
            "odd": np.arange(len(maps)) % 2 == 1}[marks]  # fmt: skip
    values = pa.array([f"v{i}" for i in range(len(maps))])
    out = with_entry(maps, rows, "_src", values).to_pylist()
    expected = [None if m is None else ([("_src", f"v{i}")] if rows[i] else []) + m
                for i, m in enumerate(MAPS[offset:])]  # fmt: skip
    assert out == expected


@pytest.mark.parametrize("offset", range(3))
def test_a_fixed_table_keeps_only_its_columns(offset):
    maps = _sliced(offset)
    labels = np.array(["t", "u"] * 4, dtype=object)[: len(maps)]
    out = only_columns(maps, labels, {"t": frozenset({"a", "c"})}).to_pylist()
    expected = [None if m is None else [(k, v) for k, v in m if labels[i] != "t" or k in ("a", "c")]
                for i, m in enumerate(MAPS[offset:])]  # fmt: skip
    assert out == expected
