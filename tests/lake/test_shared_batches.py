"""A day dealt out to n processes by row group: each reads its own part, and the parts sorted by place are
the day as one read gives it, whatever n (fewer row groups than processes: every n-th batch of one read)."""

import pyarrow as pa
import pytest
from deltalake import WriterProperties, write_deltalake
from pyarrow import fs

from cdc_pipelines.lake.delta_rs import _partition, partition_batches, read_partition, shared_batches


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("shared") / "t")
    for part in range(2):  # two files of the day, of 4 row groups of 5 rows each, and another day
        rows = pa.table({"n": pa.array(range(part * 20, part * 20 + 20), pa.int64()), "dt": ["d1"] * 20})
        write_deltalake(path, rows, partition_by=["dt"], mode="append",
                        writer_properties=WriterProperties(max_row_group_size=5))  # fmt: skip
    write_deltalake(path, pa.table({"n": pa.array([99], pa.int64()), "dt": ["d2"]}), mode="append")
    return path


@pytest.mark.parametrize("processes", [1, 2, 3, 8, 9])
def test_the_parts_sorted_by_place_are_the_day(table, processes):
    whole = partition_batches(table, "dt", "d1", ["n", "absent"], batch_rows=3).read_all()
    parts = [shared_batches(table, "dt", "d1", ["n", "absent"], (k, processes), batch_rows=3) for k in range(processes)]
    shares = [list(p) for p in parts]
    day = pa.Table.from_batches([b for _, b in sorted((p for s in shares for p in s), key=lambda p: p[0])])
    assert day.equals(whole) and sorted(day.column("n").to_pylist()) == list(range(40))
    places = [{place for place, _ in s} for s in shares]
    assert sum(map(len, places)) == len(set().union(*places))  # no place read by two processes
    if processes <= 8:  # 8 row groups: each process read its own, at most 2 batches of 3 rows each
        assert all(len(s) <= 2 * -(-8 // processes) for s in shares) and max(map(len, places)) == -(-8 // processes)


def test_a_partition_whose_folder_name_is_escaped_is_read_by_arrows_own_filesystem(tmp_path):
    """Partition values Delta escapes in folder names (`%`, spaces, `=`) read back through pyarrow's own
    local filesystem (`native_files`), which a Python filesystem's buffers cannot outlive at the exit."""
    path = str(tmp_path / "t")
    topics = ["a b", "x%y=z", "天"]
    write_deltalake(path, pa.table({"n": pa.array([1, 2, 3], pa.int64()), "topic": topics}), partition_by=["topic"])
    assert [read_partition(path, "topic", t, ["n"]).column("n").to_pylist() for t in topics] == [[1], [2], [3]]
    dataset, _ = _partition(path, "topic", "a b", ["n"], 10, None)
    assert not isinstance(dataset.filesystem, fs.PyFileSystem)
