"""Map columns to and from dicts through their flat buffers: the same dicts `to_pylist` gives."""

from __future__ import annotations

import pyarrow as pa
import pytest

from cdc_pipelines.runtime.arrow_maps import batch_rows, map_array, map_dicts

TEXT_MAP = pa.map_(pa.string(), pa.string())
ROWS = [
    {"a": "x", "b": "y"},
    {"a": "x", "b": "y"},
    {"a": "x", "b": None},
    {"a": "x", "b": None},
    None,
    {},
    {"": ""},
    {"b": "y", "a": "x"},
    {"ab": "x"},
    {"a": "bx"},
]


def _as_dicts(column: pa.MapArray) -> list[dict | None]:
    return [None if row is None else dict(row) for row in column.to_pylist()]


@pytest.mark.parametrize("shared", [False, True])
def test_map_dicts_equal_pyarrows_own_conversion(shared):
    column = pa.array([None if r is None else list(r.items()) for r in ROWS], TEXT_MAP)
    dicts = map_dicts(column, shared=shared)
    assert dicts == _as_dicts(column) == ROWS
    assert [list(d) for d in dicts if d] == [list(r) for r in ROWS if r]  # key order kept
    # a batch's slice: its offsets point into the whole column's keys and items
    slices = [(start, length) for start in range(len(ROWS)) for length in range(len(ROWS) - start + 1)]
    assert all(map_dicts(column.slice(*s), shared=shared) == ROWS[s[0] : sum(s)] for s in slices)


def test_shared_rows_with_the_same_entries_get_one_dict():
    column = pa.array([None if r is None else list(r.items()) for r in ROWS], TEXT_MAP)
    dicts = map_dicts(column, shared=True)
    assert dicts[0] is dicts[1]
    assert dicts[2] is not dicts[3]  # a null item: not shared, built per row
    assert dicts[0] is not dicts[7]  # same entries in another order are another map
    assert dicts[5] == {} and dicts[6] == {"": ""}


def test_a_nul_inside_a_key_turns_sharing_off_rather_than_confuse_maps():
    rows = [{"a\x00b": "c"}, {"a": "b\x00c"}, {"a\x00b": "c"}]
    column = pa.array([list(r.items()) for r in rows], TEXT_MAP)
    dicts = map_dicts(column, shared=True)
    assert dicts == rows and dicts[0] is not dicts[2]


def test_map_array_round_trips_shared_and_distinct_dicts():
    types = {"id": "INT", "name": "STRING"}
    rows = [types, types, {"id": "1"}, None, types, types, types, types, types]
    assert map_dicts(map_array(rows)) == rows


def test_batch_rows_give_maps_as_dicts_and_times_as_epoch_micros_whatever_the_unit():
    rows = [{"t": 1_500, "m": {"a": "x"}}, {"t": None, "m": None}]
    batch = pa.RecordBatch.from_pylist(
        rows, pa.schema([("t", pa.timestamp("ms", tz="Asia/Shanghai")), ("m", TEXT_MAP)])
    )
    assert batch_rows(batch) == [{"t": 1_500_000, "m": {"a": "x"}}, {"t": None, "m": None}]
    assert batch_rows(pa.Table.from_batches([batch, batch]), shared=("m",))[2:] == batch_rows(batch)


LISTS = [["id"], ["id"], None, [], [""], ["a", "b"], ["a", None], ["a", None], ["ab"], ["a\x00b"], ["id"]]


def test_shared_lists_equal_pyarrows_own_conversion_and_share_one_list_per_value():
    column = pa.array(LISTS, pa.list_(pa.string()))
    slices = [(start, length) for start in range(len(LISTS)) for length in range(len(LISTS) - start + 1)]
    for start, length in slices:
        rows = batch_rows(pa.table({"pk": column.slice(start, length)}), ("pk",))
        assert [r["pk"] for r in rows] == LISTS[start : start + length]
    rows = [r["pk"] for r in batch_rows(pa.table({"pk": column[:9]}), ("pk",))]
    assert rows[0] is rows[1] and rows[3] is not rows[4]  # [] and [""] kept apart
    assert rows[6] is not rows[7]  # a null item: a list per row
    # a NUL inside an item turns sharing off for the batch rather than confuse lists
    rows = [r["pk"] for r in batch_rows(pa.table({"pk": column}), ("pk",))]
    assert rows == LISTS and rows[0] is not rows[10]
