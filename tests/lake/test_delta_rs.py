"""delta-rs and Spark write the same lake: an in-process decode equals the Spark decode of the same
extract, row for row, and each engine reads and replaces what the other committed."""

from __future__ import annotations

import json

from deltalake import DeltaTable

from cdc_pipelines.decode.pool import decode_with_processes
from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.lake import io
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import read_counts, write_counts
from cdc_pipelines.model.meta_keys import DUPLICATE_OF
from tests.decode.test_in_process import canal


def _extract(path):
    lines = [canal(n) for n in range(6)] + [canal(n, "UPDATE", f"u{n}") for n in range(6, 12)]
    lines += [lines[2], canal(7, "UPDATE", "u7", ts_delay=900), "{broken", canal(20, "DELETE")]
    path.write_text("\n".join(lines) + "\n")
    return path


def _spark_decode(spark, extract, lake, topic):
    counts = write_decoded(decode_files(spark, "oms-canal", [extract], topic=topic, dt="2024-01-01"), lake)
    write_counts(spark, lake, "2024-01-01", {topic: counts})
    return counts


def _same(spark, a, b):
    """The two tables' schemas and rows equal (rows with maps as dicts, in a fixed order)."""
    frame_a, frame_b = spark.read.format("delta").load(str(a)), spark.read.format("delta").load(str(b))
    assert frame_a.schema == frame_b.schema

    def rows(frame):
        return sorted((r.asDict(recursive=True) for r in frame.collect()), key=lambda r: json.dumps(r, default=str))

    assert rows(frame_a) == rows(frame_b) != []


def test_in_process_and_spark_decodes_write_the_same_tables(spark, tmp_path):
    extract = _extract(tmp_path / "orders.jsonl")
    in_process, on_spark = tmp_path / "in-process", tmp_path / "spark"
    counts = decode_with_processes("oms-canal", [str(extract)], topic="orders", dt="2024-01-01", out=str(in_process))
    assert _spark_decode(spark, extract, on_spark, "orders") == counts
    for table in (CHANGES_DIR, REJECTS_DIR, COUNTS_DIR):
        _same(spark, in_process / table, on_spark / table)
    marked = io.read_canonical(spark, str(in_process / CHANGES_DIR)).where(f"meta['{DUPLICATE_OF}'] IS NOT NULL")
    assert sorted(r.source_line for r in marked.collect()) == [13, 14]


def test_each_engine_reads_and_replaces_what_the_other_committed(spark, tmp_path):
    extract, lake = _extract(tmp_path / "orders.jsonl"), tmp_path / "lake"
    decode_with_processes("oms-canal", [str(extract)], topic="a", dt="2024-01-01", out=str(lake))
    _spark_decode(spark, extract, lake, "b")  # Spark commits after delta-rs
    decode_with_processes("oms-canal", [str(extract)], topic="b", dt="2024-01-01", out=str(lake))  # and the reverse
    _spark_decode(spark, extract, lake, "a")

    changes = spark.read.format("delta").load(str(lake / CHANGES_DIR))
    assert {r.source_topic: r["count"] for r in changes.groupBy("source_topic").count().collect()} == {"a": 15, "b": 15}
    assert DeltaTable(str(lake / CHANGES_DIR)).to_pyarrow_table().num_rows == 30
    history = [h["engineInfo"] if "engineInfo" in h else h.get("clientVersion", "") for h in
               DeltaTable(str(lake / CHANGES_DIR)).history()]  # fmt: skip
    assert any("delta-rs" in h for h in history) and any("Spark" in h for h in history)
    assert {t: c["events"] for t, c in read_counts(spark, lake, "2024-01-01").items()} == {"a": 15, "b": 15}
