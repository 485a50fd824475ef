"""Partitions of a local lake's Delta tables replaced with delta-rs, for small writes a Spark job and
commit would cost seconds for (the in-process decode, a small snapshot day's datasets).

The lake's tables are Delta tables whatever writes them: delta-rs (the `deltalake` package) commits
to the same log with the same protocol Spark's writer uses here (reader 1, writer 2 for these
tables' types; 3/7 with the `timestampNtz` feature where a snapshot table has such a column), keeps the table's
properties (the statistics columns), and replaces partitions by predicate in one commit, as Spark's
`replaceWhere` does. Spark reads what it wrote and writes after it (`tests/lake/test_delta_rs.py`).
Used for local paths only: the lake's other filesystems are configured through Hadoop.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import unquote

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from cdc_pipelines.runtime.storage import local_path


def local_table_path(path: str) -> str | None:
    """The local path delta-rs opens for the table at `path`; None for a table elsewhere, or under a
    folder name with `%` (delta-rs 1.6 decodes such a path as a URL: Spark's escaped folder names have them)."""
    local = local_path(path)
    return local if local is not None and "%" not in local else None


def native_files(local: str):
    """pyarrow's own filesystem rooted at the local table folder `local`, for delta-rs's reads of it: by
    default delta-rs reads through a Python filesystem, whose buffers Arrow's I/O threads could still release
    after the interpreter stopped; about one snapshot run in ten then aborted at its exit ("terminate called
    without an active exception", exit 134)."""
    from pyarrow import fs

    return fs.SubTreeFileSystem(local, fs.LocalFileSystem())


def table_rows(table, columns: Sequence[str] | None = None) -> pa.Table:
    """Every row (of `columns`, else all) of a local delta-rs `DeltaTable`, read through `native_files`."""
    columns = None if columns is None else list(columns)
    return table.to_pyarrow_table(columns=columns, filesystem=native_files(local_path(table.table_uri)))


def read_rows(path: str) -> list[dict]:
    """Every row of the small local table at `path` (none where there is no table), without Spark."""
    from deltalake import DeltaTable

    local = local_table_path(path)
    if not DeltaTable.is_deltatable(local):
        return []
    return table_rows(DeltaTable(local)).to_pylist()


def small_partition_rows(path: str, partition: Mapping[str, str]) -> list[dict]:
    """The rows of the small local table at `path` in `partition` (a value of each partition column), its
    partition columns among them; none where there is no table. Read file by file, without pyarrow's dataset
    module, whose import is most of a second of a short process (the local Kafka day's recorded offsets); a
    table with reader features (deletion vectors) is read by `read_partition`."""
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    local = local_table_path(path)
    if local is None or not DeltaTable.is_deltatable(local):
        return []
    table = DeltaTable(local)
    if table.protocol().reader_features:
        first, *rest = partition.items()
        rows = read_partition(path, first[0], first[1], table.schema().to_arrow().names).to_pylist()
        return [r for r in rows if all(r[k] == v for k, v in rest)]
    rows = []
    for action in pa.table(table.get_add_actions(flatten=True)).to_pylist():
        values = {k: action[f"partition.{k}"] for k in partition}
        if values == dict(partition):
            file = os.path.join(local, unquote(action["path"]))
            rows += [r | values for r in pq.ParquetFile(file).read().to_pylist()]
    return rows


def read_partition(path: str, column: str, value: str, columns: Sequence[str]) -> pa.Table | None:
    """The rows of the local table at `path` whose partition `column` is `value`, with `columns` (a
    column the table lacks, written before a release added it, reads as null); None where there is no table."""
    batches = partition_batches(path, column, value, columns)
    return None if batches is None else batches.read_all().select(list(columns))


def partition_batches(
    path: str, column: str, value: str, columns: Sequence[str], batch_rows: int = 131_072, version: int | None = None
) -> pa.RecordBatchReader | None:
    """`read_partition`'s rows (of the table's `version`, else its latest) as a stream of batches of at most
    `batch_rows`: a caller that handles a batch at a time holds one, not the partition."""
    opened = _partition(path, column, value, columns, batch_rows, version)
    return None if opened is None else opened[1](opened[0])


def shared_batches(
    path: str, column: str, value: str, columns: Sequence[str], share: tuple[int, int], batch_rows: int,
    version: int | None = None,
) -> Iterator[tuple[int, pa.RecordBatch]]:  # fmt: skip
    """`partition_batches`' rows of every n-th row group from the k-th (`share` `(k, n)`), each batch with
    its row group's place in the partition: n processes dealing a day out each decode their own part, and
    their batches sorted (stably) by place are `partition_batches`' in its order. A partition of fewer row
    groups than processes is read whole by each, which keeps every n-th batch (its place its order)."""
    import pyarrow.dataset as ds

    opened = _partition(path, column, value, columns, batch_rows, version)
    if opened is None:
        return
    (dataset, scan), (k, n) = opened, share
    wanted = ds.field(column) == value
    groups = [group for fragment in dataset.get_fragments(filter=wanted) for group in fragment.split_by_row_group()]
    if len(groups) < n:
        yield from ((i, batch) for i, batch in enumerate(scan(dataset)) if i % n == k)
        return
    for place in range(k, len(groups), n):
        part = ds.FileSystemDataset([groups[place]], dataset.schema, dataset.format, dataset.filesystem)
        yield from ((place, batch) for batch in scan(part))


def _partition(
    path: str, column: str, value: str, columns: Sequence[str], batch_rows: int, version: int | None
) -> tuple | None:
    """The partition's files as a pyarrow dataset, and what scans it or a part of it (a column the table
    lacks, written before a release added it, reads as null); None where there is no table."""
    import pyarrow.dataset as ds  # here: a third of a second of every process importing this module
    from deltalake import DeltaTable

    local = local_table_path(path)
    if local is None or not DeltaTable.is_deltatable(local):
        return None
    table = DeltaTable(local, version=version)
    held = set(table.schema().to_arrow().names)
    # Spark writes timestamps as INT96, which Arrow reads as nanoseconds unless told: years outside
    # 1677-2262 (an epoch in the wrong unit) would wrap
    options = ds.ParquetReadOptions(coerce_int96_timestamp_unit="us")
    dataset = table.to_pyarrow_dataset(parquet_read_options=options, file_pruning_predicate=[(column, "=", value)],
                                       filesystem=native_files(local))  # fmt: skip
    read, missing = [c for c in columns if c in held], [c for c in columns if c not in held]

    def scan(part) -> pa.RecordBatchReader:
        scanner = part.scanner(columns=read, filter=ds.field(column) == value, batch_size=batch_rows)
        if not missing:
            return scanner.to_reader()
        schema = pa.schema([*scanner.projected_schema, *(pa.field(n, pa.null()) for n in missing)])
        filled = (
            pa.RecordBatch.from_arrays([*b.columns, *(pa.nulls(b.num_rows) for _ in missing)], schema=schema)
            for b in scanner.to_batches()
        )
        return pa.RecordBatchReader.from_batches(schema, filled)

    return dataset, scan


def partition_counts(path: str, column: str) -> dict[str, int] | None:
    """The rows of the local table at `path` per value of its partition `column`, from one read of its log
    (no scan; see `file_rows`); None for a table elsewhere or not there."""
    from deltalake import DeltaTable

    local = local_table_path(path)
    if local is None or not DeltaTable.is_deltatable(local):
        return None
    files = pa.table(DeltaTable(local).get_add_actions(flatten=True))
    counts: dict[str, int] = {}
    if files.num_rows:
        values = files.column(f"partition.{column}").to_pylist()
        for value, rows in zip(values, files.column("num_records").to_pylist(), strict=True):
            counts[value] = counts.get(value, 0) + (rows or 0)
    return counts


def file_rows(table) -> int:
    """The rows a loaded delta-rs table's files hold by their statistics (`numRecords`; a file written
    without them counts none). Rows a deletion vector removes are still counted: for tables without them."""
    files = pa.table(table.get_add_actions(flatten=True))
    return sum(n or 0 for n in files.column("num_records").to_pylist()) if files.num_rows else 0


def arrow_schema(schema: T.StructType) -> pa.Schema:
    """The Arrow schema of a lake table's Spark schema (times as UTC microseconds)."""
    return to_arrow_schema(schema, timezone="UTC")


def partition_predicate(replace: Sequence[Mapping[str, str]]) -> str:
    """The SQL predicate (delta-rs's DataFusion dialect: `''` for a quote) of the partitions `replace` names."""
    terms = (" AND ".join(f"{name} = '" + value.replace("'", "''") + "'" for name, value in p.items()) for p in replace)
    return " OR ".join(f"({term})" for term in terms)


def replace_partitions(
    data: pa.Table,
    path: str,
    replace: Sequence[Mapping[str, str]],
    schema: T.StructType,
    partition_by: Sequence[str],
    properties: Mapping[str, str] | None = None,
) -> int:
    """Replace the partitions `replace` of the Delta table at the local `path` with `data` (whose rows
    all fall in them) in one commit, creating the table first where there is none; the new version."""
    from deltalake import DeltaTable, write_deltalake

    target = arrow_schema(schema)
    if not DeltaTable.is_deltatable(path):
        # "ignore": a concurrent writer that created it first wins, as Spark's createIfNotExists
        DeltaTable.create(path, target, mode="ignore", partition_by=list(partition_by),
                          configuration=dict(properties or {}))  # fmt: skip
    # "merge": a column a newer release adds joins an older table, as Spark's `mergeSchema` does
    write_deltalake(path, data.cast(target), mode="overwrite", predicate=partition_predicate(replace),
                    schema_mode="merge")  # fmt: skip
    return DeltaTable(path).version()
