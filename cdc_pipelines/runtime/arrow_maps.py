"""`map<string,string>` Arrow columns to and from Python dicts, through their flat buffers.

Building a map column from dicts row by row (`pa.array` of dicts) or reading one with `to_pylist`
costs several times more than going through the offsets, keys and items arrays once.
"""

from __future__ import annotations

from itertools import accumulate, chain

import pyarrow as pa
import pyarrow.compute as pc

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


def batch_rows(batch: pa.RecordBatch | pa.Table, shared: tuple[str, ...] = ()) -> list[dict]:
    """A batch as one dict per row, as the Python rules read rows: maps as dicts (the `shared` columns' one
    dict or list of text per distinct value, see `map_dicts`), times as epoch microseconds whatever their unit
    and zone."""
    names, columns = batch.schema.names, []
    for name in names:
        column = batch.column(name)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if pa.types.is_map(column.type):
            columns.append(map_dicts(column, shared=name in shared))
        elif pa.types.is_list(column.type) and name in shared:
            columns.append(shared_lists(column))
        elif pa.types.is_timestamp(column.type):
            micros = pc.cast(column, pa.timestamp("us", tz=column.type.tz))
            columns.append(pc.cast(micros, pa.int64()).to_pylist())
        else:
            columns.append(column.to_pylist())
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def map_dicts(column: pa.MapArray, shared: bool = False) -> list[dict | None]:
    """A map column as dicts, built from its flat keys and items (`to_pylist` is 3x slower).

    `shared`: the column holds few distinct maps (a table's column types): rows with the same entries
    get one dict, built once, which callers only read.
    """
    offsets, valid = column.offsets.to_pylist(), column.is_valid().to_pylist()
    if shared and len(column):
        signatures = _signatures(column)
        if signatures is not None:
            return _shared_dicts(column, offsets, valid, *signatures)
    # a slice of a batch: its offsets point into the whole batch's keys and items
    first = offsets[0]
    keys, items = column.keys[first : offsets[-1]].to_pylist(), column.items[first : offsets[-1]].to_pylist()
    offsets = [offset - first for offset in offsets]
    return [
        dict(zip(keys[start:end], items[start:end], strict=True)) if ok else None
        for ok, start, end in zip(valid, offsets, offsets[1:], strict=False)
    ]


_SEPARATOR = "\x00"


def _signatures(column: pa.MapArray) -> tuple[list, list] | None:
    """Each row's keys and items joined by NUL (Arrow kernels, no Python strings per entry); None when
    a key or item holds a NUL itself, so that a joined text could stand for two different maps. A row
    with a null item has a null signature."""
    keys, items = column.keys, column.items
    if pc.any(pc.match_substring(keys, _SEPARATOR)).as_py() or pc.any(pc.match_substring(items, _SEPARATOR)).as_py():
        return None
    offsets = column.offsets
    joined_keys = pc.binary_join(pa.ListArray.from_arrays(offsets, keys), _SEPARATOR)
    joined_items = pc.binary_join(pa.ListArray.from_arrays(offsets, items), _SEPARATOR)
    return joined_keys.to_pylist(), joined_items.to_pylist()


def shared_lists(column: pa.ListArray) -> list[list | None]:
    """A list<string> column of few distinct lists (a table's PK names) as one Python list per distinct list,
    which callers only read: from each row's items joined by NUL and its length (`to_pylist` builds a list
    per row). A NUL in an item, or a null item, gives that row a list of its own."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pc.any(pc.match_substring(column.flatten(), _SEPARATOR)).as_py():
        return column.to_pylist()
    built: dict[tuple[int, str], list] = {}
    out: list[list | None] = []
    lengths = pc.list_value_length(column).to_pylist()
    for i, (n, joined) in enumerate(zip(lengths, pc.binary_join(column, _SEPARATOR).to_pylist(), strict=True)):
        if n is None or joined is None:
            out.append(None if n is None else column[i].as_py())
            continue
        entries = built.get((n, joined))
        if entries is None:
            entries = built[(n, joined)] = joined.split(_SEPARATOR) if n else []
        out.append(entries)
    return out


def _shared_dicts(column: pa.MapArray, offsets: list, valid: list, keys: list, items: list) -> list[dict | None]:
    built: dict[tuple[int, str, str], dict] = {}
    out: list[dict | None] = []
    for ok, start, end, joined_keys, joined_items in zip(valid, offsets, offsets[1:], keys, items, strict=False):
        if not ok:
            out.append(None)
            continue
        # with the entry count, NUL-free joined texts tell maps apart ({"": ""} from {})
        signature = (end - start, joined_keys, joined_items)
        entries = built.get(signature) if joined_items is not None else None
        if entries is None:
            names = column.keys.slice(start, end - start).to_pylist()
            entries = dict(zip(names, column.items.slice(start, end - start).to_pylist(), strict=True))
            if joined_items is not None:
                built[signature] = entries
        out.append(entries)
    return out
