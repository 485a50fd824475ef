"""Reading extracts: exact 1-based line numbers across file splits and compressed files."""

from __future__ import annotations

import gzip

import pytest

from cdc_pipelines import io


def _numbered(n: int) -> str:
    return "".join(f'{{"line": {i}, "pad": "{"x" * (i % 50)}"}}\n' for i in range(1, n + 1))


def _line_pairs(spark, files):
    rows = io.read_lines(spark, files).collect()
    return sorted((r.source_file.rsplit("/", 1)[-1], r.source_line, r.value) for r in rows)


def test_line_numbers_across_many_splits(spark, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_numbered(3000))
    b.write_text(_numbered(1200))
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        df = io.read_lines(spark, [str(a), str(b)])
        assert df.rdd.getNumPartitions() > 10
        rows = df.collect()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")
    assert len(rows) == 4200
    for row in rows:
        assert row.value.startswith(f'{{"line": {row.source_line},')


def test_gzip_and_blank_lines_keep_their_numbers(spark, tmp_path):
    path = tmp_path / "topic.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write('{"a":1}\n\n{"a":3}\n')
    assert _line_pairs(spark, [str(path)]) == [
        ("topic.jsonl.gz", 1, '{"a":1}'),
        ("topic.jsonl.gz", 2, ""),
        ("topic.jsonl.gz", 3, '{"a":3}'),
    ]


def test_folders_are_walked_and_hidden_files_skipped(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "x.jsonl").write_text("{}\n")
    (tmp_path / "d" / "_SUCCESS").write_text("")
    (tmp_path / "d" / ".hidden").write_text("{}\n")
    assert [p.rsplit("/", 1)[-1] for p in io.list_input_files([tmp_path / "d"])] == ["x.jsonl"]


def test_missing_input_is_a_clear_error(tmp_path):
    with pytest.raises(io.InputError, match="does not exist"):
        io.list_input_files([tmp_path / "nope.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(io.InputError, match="no input files"):
        io.list_input_files([tmp_path / "empty"])
