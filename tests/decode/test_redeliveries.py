"""Redelivered messages through Spark and the lake: marked `cdc.duplicate_of` the first delivery,
counted per topic by the conservation rule, applied once by snapshots."""

import json
from pathlib import Path

from pyspark.sql import functions as F

from cdc_pipelines.decode.runner import decode_files, write_decoded
from cdc_pipelines.engines.spark import SparkEngine
from cdc_pipelines.lake.run_counts import write_counts
from cdc_pipelines.snapshots import snapshot_days
from cdc_pipelines.snapshots.store import table_root
from tests.quality.rows import rules_of

DAY = "2024-01-01"
TYPES = {"mysqlType": {"id": "int", "name": "varchar(8)"}, "sqlType": {"id": 4, "name": 12}, "pkNames": ["id"]}


def _canal(op, rows, es, ts=None, msg_id=1, old=None):
    message = {"data": rows, "database": "shop", "table": "orders", "type": op, "es": es, "ts": ts or es + 5,
               "id": msg_id, "isDdl": False, "sql": "", "old": old, **TYPES}  # fmt: skip
    return json.dumps(message)


def _decode(spark, tmp_path, format_id, lines):
    path = tmp_path / "topic.jsonl"
    path.write_text("\n".join(lines) + "\n")
    lake = tmp_path / "lake"
    counts = write_decoded(decode_files(spark, format_id, [path], topic="t", dt=DAY), lake)
    write_counts(spark, lake, DAY, {"t": counts})
    return lake


def _marks(spark, lake):
    """{line: line of the first delivery} of every event marked a repeat, with the row it came from."""
    events = spark.read.format("delta").load(str(lake / "changes"))
    first = {r.event_id: r.source_line for r in events.collect()}
    return sorted(
        (r.source_line, r.row, first[r.meta["cdc.duplicate_of"]])
        for r in events.select("source_line", F.col("meta")["cdc.row_index"].alias("row"), "meta").collect()
        if r.meta and "cdc.duplicate_of" in r.meta
    )


def test_a_canal_message_delivered_three_times_applies_once(spark, tmp_path):
    x = _canal("INSERT", [{"id": "1", "name": "a"}], 1704067200000)
    y = _canal("INSERT", [{"id": "2", "name": "b"}], 1704067201000)
    z = _canal("UPDATE", [{"id": "1", "name": "a2"}], 1704067202000, old=[{"name": "a"}])
    lake = _decode(spark, tmp_path, "oms-canal", [x, y, x, x, z])
    assert _marks(spark, lake) == [(3, "0", 1), (4, "0", 1)]

    conservation = rules_of(SparkEngine(spark), lake, DAY)["conservation_check"]
    assert conservation.passed
    assert [(g["source_topic"], g["read"], g["decoded"], g["duplicates"]) for g in conservation.groups] == [
        ("t", 5, 5, 2)
    ]
    assert conservation.info["duplicates"] == 2

    summary = snapshot_days(spark, lake, [DAY])[DAY]
    assert (summary["applied"], summary["anomalies"]) == (3, 0)  # x once, y, z: no insert_of_existing_key
    table = Path(table_root(lake / "snapshots", "shop", None, "orders"))
    current = spark.read.format("delta").load(str(table / "current"))
    assert sorted((r.id, r.name) for r in current.collect()) == [(1, "a2"), (2, "b")]
    history = spark.read.format("delta").load(str(table / "history"))
    assert history.count() == 3


def test_what_identifies_a_delivery(spark, tmp_path):
    """A replay with a new canal `ts` and batch `id` is a repeat; two equal rows of one message, and the
    same change at another `es`, are not."""
    x = _canal("INSERT", [{"id": "1", "name": "a"}], 1704067200000, msg_id=1)
    replayed = _canal("INSERT", [{"id": "1", "name": "a"}], 1704067200000, ts=1704067299999, msg_id=9)
    later = _canal("INSERT", [{"id": "1", "name": "a"}], 1704067200001)
    twins = _canal("INSERT", [{"id": "5", "name": "e"}, {"id": "5", "name": "e"}], 1704067203000)
    lake = _decode(spark, tmp_path, "oms-canal", [x, twins, replayed, later, twins])
    assert _marks(spark, lake) == [(3, "0", 1), (5, "0", 2), (5, "1", 2)]


def test_fields_the_codec_does_not_know_are_kept_but_not_compared(spark, tmp_path):
    """A Maxwell replay that differs only in a top-level field Maxwell does not define (kept in
    `cdc.extra`) is a repeat: a replay may set such a field anew, as canal's replays set `ts` anew."""
    change = {"database": "shop", "table": "orders", "type": "insert", "ts": 1704067200, "xid": 7, "xoffset": 0,
              "data": {"id": 1, "name": "a"}, "primary_key_columns": ["id"]}  # fmt: skip
    lines = [json.dumps(change), json.dumps(change | {"send_ms": 1704067300123})]
    lake = _decode(spark, tmp_path, "maxwell-json", lines)
    assert _marks(spark, lake) == [(2, None, 1)]
    replay = spark.read.format("delta").load(str(lake / "changes")).where(F.col("source_line") == 2).first()
    assert json.loads(replay.meta["cdc.extra"]) == {"send_ms": 1704067300123}


def test_a_debezium_replay_keeps_its_source_position(spark, tmp_path):
    """A connector restarted from its offsets sends a change again with a new envelope ts_ms: a repeat.
    Snapshot reads share one binlog position (row 0) but not their rows: none is a repeat."""

    def message(n, ts_ms, op="c", pos=400):
        source = {"db": "shop", "table": "orders", "ts_ms": 1704067200000, "file": "bin.000001", "pos": pos,
                  "row": 0, "snapshot": "true" if op == "r" else "false"}  # fmt: skip
        return json.dumps({"before": None, "after": {"id": n}, "op": op, "ts_ms": ts_ms, "source": source})

    lines = [message(1, 1704067200100), message(2, 1704067200200, op="r", pos=4),
             message(3, 1704067200300, op="r", pos=4), message(1, 1704067999999)]  # fmt: skip
    lake = _decode(spark, tmp_path, "oms-debezium", lines)
    assert [(line, first) for line, _, first in _marks(spark, lake)] == [(4, 1)]
