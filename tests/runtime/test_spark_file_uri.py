"""Files are named as Spark's reader names them, whatever their folders hold (`dt=` partitions, spaces,
percent signs, non-ASCII): event ids and line numbering depend on it, in and out of Spark."""

from __future__ import annotations

from pyspark.sql import functions as F

from cdc_pipelines.runtime.inputs import spark_file_uri

# no glob characters: Spark expands them
NAMES = ("dt=2024-01-01/p.jsonl", "a b/c%d.jsonl", "ü 中/x#y,;@&+$.jsonl", "t'(1)!~.jsonl")


def test_file_uris_are_sparks_own(spark, tmp_path):
    paths = []
    for name in NAMES:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
        paths.append(path)
    read = spark.read.format("text").load([str(p) for p in paths]).select(F.col("_metadata.file_path"))
    assert sorted(r[0] for r in read.collect()) == sorted(spark_file_uri(p) for p in paths)
