"""`map<string,string>` Arrow columns to and from Python dicts, through their flat buffers.

Building a map column from dicts row by row (`pa.array` of dicts) or reading one with `to_pylist`
costs several times more than going through the offsets, keys and items arrays once.
"""

from __future__ import annotations

from itertools import accumulate, chain

import pyarrow as pa

_NO_ENTRIES: dict = {}


def map_array(dicts: list[dict | None]) -> pa.MapArray:
    """A map<string,string> column from dicts, built from flat offsets/keys/items (no per-row arrays).

    Dicts that many rows share (a table's column types, cached by its codec) are converted once and
    repeated by Arrow's `take`.
    """
    ids = list(map(id, dicts))
    if len(set(ids)) * 4 >= len(dicts):
        return _flat_map_array(dicts)
    firsts = dict(zip(ids, dicts, strict=True))
    position = {key: n for n, key in enumerate(firsts)}
    return _flat_map_array(list(firsts.values())).take(pa.array(list(map(position.__getitem__, ids)), pa.int32()))


def _flat_map_array(dicts: list[dict | None]) -> pa.MapArray:
    present = [_NO_ENTRIES if d is None else d for d in dicts]
    offsets = pa.array([0, *accumulate(map(len, present))], pa.int32())
    keys = pa.array(list(chain.from_iterable(present)), pa.string())
    items = pa.array(list(chain.from_iterable(map(dict.values, present))), pa.string())
    nulls = [d is None for d in dicts]
    mask = pa.array(nulls, pa.bool_()) if any(nulls) else None
    return pa.MapArray.from_arrays(offsets, keys, items, mask=mask)


def map_dicts(column: pa.MapArray) -> list[dict | None]:
    """A map column as dicts, built from its flat keys and items (`to_pylist` is 3x slower)."""
    offsets, keys, items = column.offsets.to_pylist(), column.keys.to_pylist(), column.items.to_pylist()
    valid = column.is_valid().to_pylist()
    return [
        dict(zip(keys[start:end], items[start:end], strict=True)) if ok else None
        for ok, start, end in zip(valid, offsets, offsets[1:], strict=False)
    ]
