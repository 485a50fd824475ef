"""Extract lines as Spark reads them: exact 1-based line numbers across file splits and compressed files."""

from __future__ import annotations

import gzip

import pyarrow as pa
from pyspark.sql import types as T

from cdc_pipelines.extract.lines import read_extract_lines
from cdc_pipelines.formats import get_codec

NUMBERED = T.StructType(
    [T.StructField("source_file", T.StringType()), T.StructField("source_line", T.LongType()),
     T.StructField("value", T.StringType())]
)  # fmt: skip


def _numbered(n: int) -> str:
    return "".join(f'{{"line": {i}, "pad": "{"x" * (i % 50)}"}}\n' for i in range(1, n + 1))


def _numbered_lines(spark, files):
    """(file, line, text) of every line as the decode's own numbering gives them, in its Python workers."""
    extract = read_extract_lines(spark, files, get_codec("oms-canal"), None)
    numbering = extract.numbering

    def run(batches):
        lines = numbering.lines()
        for batch in batches:
            found = list(lines(batch))
            yield pa.RecordBatch.from_pylist(
                [
                    {"source_file": x.source_file, "source_line": x.source_line, "value": x.value.decode()}
                    for x in found
                ],
                schema=pa.schema([("source_file", pa.string()), ("source_line", pa.int64()), ("value", pa.string())]),
            )

    frame = extract.frame
    return frame.rdd.getNumPartitions(), frame.mapInArrow(run, NUMBERED).collect(), extract.read


def test_line_numbers_across_many_splits(spark, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_numbered(3000))
    b.write_text(_numbered(1200))
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        partitions, rows, read = _numbered_lines(spark, [str(a), str(b)])
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")
    assert partitions > 10
    assert len(rows) == 4200 and sorted(read.values()) == [1200, 3000]
    assert len({(r.source_file, r.source_line) for r in rows}) == 4200
    for row in rows:
        assert row.value.startswith(f'{{"line": {row.source_line},')


def test_gzip_and_blank_lines_keep_their_numbers(spark, tmp_path):
    path = tmp_path / "topic.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write('{"a":1}\n\n{"a":3}\n')
    _, rows, read = _numbered_lines(spark, [str(path)])
    assert sorted((r.source_file.rsplit("/", 1)[-1], r.source_line, r.value) for r in rows) == [
        ("topic.jsonl.gz", 1, '{"a":1}'),
        ("topic.jsonl.gz", 2, ""),
        ("topic.jsonl.gz", 3, '{"a":3}'),
    ]
    assert list(read.values()) == [3]
