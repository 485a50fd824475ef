"""The Spark runner pairs split updates as the in-process decode does, and runs the codecs once."""

from __future__ import annotations

import datetime as dt

import pytest
from deltalake import DeltaTable
from pyspark.sql import functions as F

from cdc_pipelines.decode.pool import decode_with_processes
from cdc_pipelines.decode.runner import CountedPass, decode_files, write_decoded
from cdc_pipelines.demo import extracts as demo
from tests.decode.oracles import decode_paths
from tests.formats.test_dataworks_json import halves_across_files, halves_of_a_reused_key

SPLIT_FORMATS = ("dataworks-json", "datahub-tuple", "dts-shareplex")


def _order(row: dict) -> tuple:
    return row["source_file"], row["source_line"], int((row.get("meta") or {}).get("cdc.row_index", 0))


def _spark(spark, format_id: str, inputs) -> tuple[list[dict], list[dict], dict]:
    decoded = decode_files(spark, format_id, inputs, topic="t", dt="2024-01-01")
    passed = CountedPass(decoded)
    events = sorted((r.asDict(recursive=True) for r in passed.events.collect()), key=_order)
    rejects = sorted((r.asDict() for r in decoded.rejects.collect()), key=_order)
    plan = decoded.combined._jdf.queryExecution().executedPlan().toString()
    return events, rejects, {"counts": passed.counts()["2024-01-01"], "plan": plan}


def _local(format_id: str, inputs) -> tuple[list[dict], list[dict], dict]:
    decoded = decode_paths(format_id, inputs, topic="t", dt="2024-01-01")
    events = sorted(decoded.events, key=_order)
    for event in events:  # Spark gives timestamps as naive UTC datetimes too; dicts alike
        assert event["event_time"] is None or isinstance(event["event_time"], dt.datetime)
    return events, sorted(decoded.rejects, key=_order), {"counts": decoded.counts}


@pytest.mark.parametrize("format_id", SPLIT_FORMATS)
def test_generated_extract_pairs_as_in_process_and_decodes_each_line_once(spark, tmp_path, format_id):
    events = [e for d in range(2) for e in demo.canonical_events(dt.date(2024, 1, 1) + dt.timedelta(days=d), 60)]
    half = len(events) // 2
    demo.write_extract(format_id, events[:half], tmp_path / "a.jsonl")
    demo.write_extract(format_id, events[half:], tmp_path / "b.jsonl")

    spark_events, spark_rejects, spark_run = _spark(spark, format_id, [tmp_path])
    local_events, local_rejects, local_run = _local(format_id, [tmp_path])

    assert spark_events == local_events
    assert [(r["source_line"], r["reason"]) for r in spark_rejects] == [
        (r["source_line"], r["reason"]) for r in local_rejects
    ]
    assert spark_run["counts"] == local_run["counts"] | {"filtered": 0}  # the in-process decode has no filter
    paired = sum(1 for e in spark_events if "cdc.before_source_line" in (e["meta"] or {}))
    # the DataWorks and DataHub encoders split updates into halves; DTS SharePlex writes them whole
    assert paired > 5 if format_id != "dts-shareplex" else paired == 0
    # one Python pass over the lines: the halves' branch does not decode them a second time
    assert spark_run["plan"].count("MapInArrow run(value") == 1, spark_run["plan"]


def test_halves_across_files_reused_keys_and_orphans_through_spark(spark, tmp_path):
    a, b = halves_across_files()
    (tmp_path / "a.jsonl").write_text("\n".join([*halves_of_a_reused_key(), *a]) + "\n")
    (tmp_path / "b.jsonl").write_text("\n".join(b) + "\n")

    events, rejects, run = _spark(spark, "dataworks-json", [tmp_path])

    pairs = [(e["source_line"], e["meta"].get("cdc.before_source_line"), e["before"], e["after"]) for e in events]
    assert pairs == [
        (3, "1", {"id": "1", "v": "a"}, {"id": "1", "v": "b"}),
        (4, None, None, {"id": "2", "v": "alone"}),
        (5, "2", {"id": "1", "v": "b"}, {"id": "1", "v": "c"}),
        (6, "1", {"id": "1", "v": "old"}, {"id": "1", "v": "new"}),
        (7, None, None, {"id": "2", "v": "x"}),
    ]
    assert events[3]["meta"]["cdc.before_source_file"].endswith("b.jsonl")
    assert [(r["source_line"], r["reason"]) for r in rejects] == [
        (8, "UPDATE_BEFOR without its matching after half (pair key d\u0001t\u00019)")
    ]
    assert run["counts"] == {"read": 9, "decoded": 8, "rejected": 1, "filtered": 0, "events": 5}


def test_spark_reads_a_pool_decode_and_commits_after_it(spark, tmp_path):
    """The pool's commit of files it wrote itself is a Delta table Spark reads as delta-rs does, its
    file statistics skipping only what they should; Spark's decode of another topic commits after it, and
    the pool's after Spark's."""
    extract, lake = tmp_path / "a.jsonl", tmp_path / "lake"
    demo.write_extract("oms-canal", demo.canonical_events(dt.date(2024, 1, 1), 80), extract)
    # a topic whose partition folder is escaped (Spark's names, percent-encoded again in the log's paths)
    decode_with_processes("oms-canal", [str(extract)], topic="t/1 %", dt="2024-01-01", out=str(lake), workers=1)
    changes = spark.read.format("delta").load(str(lake / "changes"))
    python = DeltaTable(str(lake / "changes")).to_pyarrow_table().to_pylist()
    assert sorted(r.event_id for r in changes.select("event_id").collect()) == sorted(r["event_id"] for r in python)
    for name in {r["table_name"] for r in python} | {"zzz"}:
        assert changes.where(F.col("table_name") == name).count() == sum(r["table_name"] == name for r in python)
    for op in ("INSERT", "DELETE", "A"):
        assert changes.where(F.col("op") == op).count() == sum(r["op"] == op for r in python)
    assert changes.where(F.col("source_line") > 40).count() == sum(r["source_line"] > 40 for r in python)
    write_decoded(decode_files(spark, "oms-canal", [extract], topic="u", dt="2024-01-01"), lake)
    decode_with_processes("oms-canal", [str(extract)], topic="v", dt="2024-01-01", out=str(lake), workers=1)
    topics = spark.read.format("delta").load(str(lake / "changes")).groupBy("source_topic").count().collect()
    assert sorted((r.source_topic, r["count"]) for r in topics) == [(t, len(python)) for t in ("t/1 %", "u", "v")]
