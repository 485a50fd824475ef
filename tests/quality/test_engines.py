"""Both engines judge a day alike, digit for digit: on hand-built events that fail every sub-check, on every
format's seed samples and on the peers' files; and what each engine judges at the edges of the rules."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdc_pipelines.decode.pool import decode_with_processes
from cdc_pipelines.engines.local import LocalEngine
from cdc_pipelines.engines.spark import SparkEngine
from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.formats import SELF_CONTAINED
from cdc_pipelines.lake.kafka_offsets import OFFSETS_DIR, OFFSETS_SCHEMA
from cdc_pipelines.lake.layout import CHANGES_DIR, COUNTS_DIR, REJECTS_DIR
from cdc_pipelines.lake.run_counts import COUNTS_SCHEMA
from cdc_pipelines.model.canonical import TOMBSTONE
from cdc_pipelines.model.schema import CANONICAL_SCHEMA, REJECTS_SCHEMA
from cdc_pipelines.quality.partition import Thresholds
from cdc_pipelines.samples import sample_folder
from tests.conftest import resource
from tests.formats.test_peer_corpora import FILES, _batch_key
from tests.quality.rows import DT, NOW, clean_events, event, reject, write_table

THRESHOLDS = Thresholds(now=NOW)
QUIET = "2024-01-05"  # a day of the hand-built lake with its counts recorded and no events


def _at(hour: int, minute: int = 0, second: int = 0, micros: int = 0) -> dt.datetime:
    return dt.datetime(2024, 1, 1, hour, minute, second, micros, tzinfo=dt.UTC)


def every_failure() -> list[dict]:
    """Events failing every sub-check of the three event rules, with the info flags, and lags in every bucket."""
    image = {"id": "1", "name": "a", "created": "2024-01-01 10:00:00.123"}
    types = {"d": "DATE", "t": "TIME", "dt": "DATETIME", "ts": "TIMESTAMP", "id": "INT"}
    oms = {"source_format": "oms-default", "event_time_unit": "s", "pk_columns": ["id1", "id2"], "column_types": {}}
    row = {"id1": "3", "id2": "129"}
    rows = [
        *clean_events(),
        event(before=image),  # INSERT with a before image
        event(op="UPSERT", after=None),
        event(op="DELETE", before=None, after=None),
        event(op="DELETE", before=image, after=image),
        event(op="UPDATE", before=None, after=image),
        event(op="UPDATE", before=image, after=None),
        event(op="UPDATE", before=None, after=image, source_format="oms-debezium", event_time_unit="ms"),
        event(op="DDL", ddl="   ", after=None, pk_columns=None, column_types=None),
        event(op="DDL", ddl=" \tALTER", after=image, pk_columns=None),
        event(op="DDL", ddl="\t", after=None, pk_columns=None),  # a tab is text: SQL's TRIM takes spaces only
        event(op="HEARTBEAT", after=image, table_name=None, db=None),
        event(op="TX_BEGIN", after=None, before=None, table_name=None, db=None, db_schema=None),
        event(op="OTHER", raw_op=TOMBSTONE, event_time=None, after=None),
        event(op="OTHER", raw_op="x", event_time=None, after=None, db="", table_name=""),
        event(source_format="oms-debezium-smt", event_time=None, event_time_unit=None),
        event(event_time_unit="s"),
        event(event_time_unit=None),
        event(source_format="unknown-format"),
        event(event_time=dt.datetime(2031, 5, 6, 7, 8, 9, tzinfo=dt.UTC), sync_time=None),
        event(event_time=dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=dt.UTC)),
        event(event_time=dt.datetime(1, 1, 1, tzinfo=dt.UTC), sync_time=None),
        event(event_time=_at(10, 30), sync_time=_at(10, 20)),  # sync 10 minutes before the event
        event(event_time=_at(10, 30), sync_time=_at(10, 26)),  # within the tolerance: a negative lag
        event(event_time=dt.datetime(2023, 12, 31, 23, tzinfo=dt.UTC)),  # outside the day
        *[
            event(event_time=_at(h), sync_time=_at(h) + dt.timedelta(microseconds=lag))
            for h, lag in (
                (1, 0),
                (2, 1),
                (3, 999),
                (4, 15_000),
                (5, 2_500_000),
                (6, 7_200_000_000),
                (7, 90_000_000_000),
                (8, 1),
            )
        ],  # fmt: skip
        event(
            after={
                "d": "2020-02-29",
                "t": "-838:59:59",
                "dt": "2020-11-25 00:01:02.123456789",
                "id": "1",
                "ts": "2020-12-31T16:01:02.012345Z",
            },
            column_types=types,
            source_types={"ts": "timestamp(6)"},
        ),  # fmt: skip
        *[
            event(after={"id": "1", **bad}, column_types=types, source_types=declared)
            for bad, declared in (
                ({"d": "2020-02-30"}, {}),
                ({"dt": "2021-04-31 00:01:02"}, {}),
                ({"t": "25:61:00"}, {}),
                ({"dt": "2020-11-25T00:01:02"}, {}),
                ({"dt": "2020-11-25 00:01:02 Asia/Shanghai"}, {}),
                ({"ts": "2020-11-24T16:01:02"}, {}),
                ({"dt": "2020-11-25 00:01:02.1234567890"}, {}),
                ({"ts": "2020-11-24T16:01:02.0123Z"}, {"ts": "timestamp(3)"}),
                ({"d": "0000-02-29"}, {}),
                ({"d": "2020-01-01\n"}, {}),
                ({"d": "2020-01-01\n\n"}, {}),
                ({"dt": "2020-01-01 00:00:00.5\r\n"}, {"dt": "datetime(0)"}),
                ({"d": None, "t": "12:00:00"}, {"t": "time"}),
            )
        ],  # fmt: skip
        event(op="DELETE", after=None, before={"d": "0000-00-00"}, column_types=types),
        event(after={"id": None, "name": "a"}),
        event(op="DELETE", before={"name": "x"}, after=None),
        event(pk_columns=None),  # other events of shop.orders name a PK
        event(pk_columns=None, table_name="logs"),
        event(pk_columns=None, source_format="oms-debezium", table_name="dbz", event_time_unit="ms"),
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}),
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}, meta={"cdc.changed_columns": '["name"]'}),
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}, meta={"cdc.changed_columns": '["id"]'}),
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}, meta={"cdc.changed_columns": '["name", null]'}),
        event(**oms, after=row, meta={"record_primary_value": "3\u0001129"}),
        event(**oms, op="DELETE", after=None, before=row, meta={"record_primary_value": "3\u0001129"}),
        event(**oms, after=row, meta={"record_primary_value": "3\u0001130"}),
        event(**oms, op="UPDATE", before=row, after={**row, "id2": "130"}, meta={"record_primary_value": "3\u0001129"}),
        event(op="UPDATE", raw_op="UPDATE_BEFOR", source_format="dataworks-json", before=image, after=image),
        event(op="UPDATE", raw_op="UPDATE AFTER", source_format="dts-shareplex", before=None, after=image),
        event(
            op="UPDATE",
            raw_op="UPDATE_AFTER",
            source_format="dataworks-json",
            before=None,
            after=image,
            meta={"cdc.before_source_line": "7"},
        ),  # fmt: skip
        event(after=image, meta={"cdc.duplicate_of": "e0001"}, source_topic="payments"),
        event(source_topic="payments", db_schema="public", source_line=1),
        event(source_topic="payments", db_schema="public", source_line=1),
    ]
    rows.append({**rows[0], "source_line": 999})  # a repeated event id
    return rows


def _offsets(day: str, partition: int, first: int, last: int, topic: str = "orders") -> dict:
    return {"kafka_topic": "k", "partition": partition, "start_offset": first, "end_offset": last + 1,
            "scan_end": last + 1, "first": first, "last": last, "messages": last - first + 1, "start_ms": 0,
            "end_ms": 1, "dt": day, "source_topic": topic}  # fmt: skip


@pytest.fixture(scope="module")
def lakes(tmp_path_factory) -> dict[str, str]:
    """Three lakes of one day: the hand-built failures (with rejects, unbalanced counts and a Kafka gap),
    every format's samples, and the peers' files, each decoded as `decode` does a small extract."""
    rules = str(tmp_path_factory.mktemp("rules"))
    events = every_failure()
    topics = sorted({e["source_topic"] for e in events})
    write_table(rules, events, CANONICAL_SCHEMA, CHANGES_DIR, [{"dt": DT, "source_topic": t} for t in topics])
    rejects = [reject(1), reject(2, "UPDATE_BEFOR without its matching after half"), reject(3, "x", "payments"),
               reject(4, "UPDATE_BEFOR without its matching after half", "payments")]  # fmt: skip
    write_table(rules, rejects, REJECTS_SCHEMA, REJECTS_DIR, [{"dt": DT, "source_topic": t} for t in topics])
    counts = [{"read": 70, "decoded": 0, "rejected": 0, "filtered": 2, "events": 0, "dt": DT, "source_topic": "orders"},
              {"read": 5, "decoded": 0, "rejected": 0, "filtered": 0, "events": 0, "dt": DT,
               "source_topic": "payments"}]  # fmt: skip
    quiet = {"read": 0, "decoded": 0, "rejected": 0, "filtered": 0, "events": 0, "dt": QUIET, "source_topic": "orders"}
    write_table(rules, counts, COUNTS_SCHEMA, COUNTS_DIR, [{"dt": DT, "source_topic": t} for t in topics])
    write_table(rules, [quiet], COUNTS_SCHEMA, COUNTS_DIR, [{"dt": QUIET, "source_topic": "orders"}])
    offsets = [_offsets("2023-12-31", 0, 0, 9), _offsets(DT, 0, 12, 20), _offsets(DT, 1, 0, 5),
               _offsets("2024-01-02", 0, 20, 30)]  # fmt: skip
    offset_days = [{"dt": o["dt"], "source_topic": "orders"} for o in offsets]
    write_table(rules, offsets, OFFSETS_SCHEMA, OFFSETS_DIR, offset_days)

    samples = str(tmp_path_factory.mktemp("samples"))
    for format_id in SELF_CONTAINED:
        decode_with_processes(format_id, list_input_files([str(sample_folder(format_id))]), topic=format_id, dt=DT,
                          out=samples)  # fmt: skip
    peers = str(tmp_path_factory.mktemp("peers"))
    for key in sorted({_batch_key(s) for s in FILES.values()}):
        names = [str(resource("peer", n)) for n, s in FILES.items() if _batch_key(s) == key]
        topic = "-".join([key[0], *(v for _, v in key[1])])
        decode_with_processes(key[0], names, topic=topic, dt=DT, out=peers, options=dict(key[1]))
    return {"rules": rules, "samples": samples, "peers": peers}


@pytest.mark.parametrize("name", ["rules", "samples", "peers"])
def test_the_engines_judge_alike(spark, lakes, name):
    local = LocalEngine().day_quality(lakes[name], DT, THRESHOLDS, {}, None)
    on_spark = SparkEngine(spark).day_quality(lakes[name], DT, THRESHOLDS, {}, None)
    assert json.loads(local.to_json()) == json.loads(on_spark.to_json())
    assert sum(sum(c["ops"].values()) for c in local.event_counts) > 0


@pytest.mark.parametrize("day", [DT, QUIET])
def test_the_gx_suite_alike_on_both_engines(spark, lakes, tmp_path, day):
    """GX over a pandas frame of the flags and over Spark's: the same outcome of every expectation, on a day
    failing every one and on a day without events; Data Docs written."""
    local = LocalEngine().day_quality(lakes["rules"], day, THRESHOLDS, {}, tmp_path / "local")
    on_spark = SparkEngine(spark).day_quality(lakes["rules"], day, THRESHOLDS, {}, tmp_path / "spark")
    assert json.loads(local.to_json()) == json.loads(on_spark.to_json())
    assert len(local.gx.outcomes) == 19 and (tmp_path / "local" / "gx" / "index.html").is_file()
    if day == DT:  # every expectation sees a failure
        assert all(o.failed for o in local.gx.outcomes) and not local.gx.success
    else:
        assert all(o.checked == 0 for o in local.gx.outcomes) and local.gx.success


def test_times_far_from_now_in_a_lake_spark_wrote(spark, tmp_path):
    """Spark writes times as INT96, which Arrow reads as nanoseconds unless told: years 1000 and 3000 judged
    alike by both engines, and a year past 9999 (an epoch in ms read as seconds) said in microseconds."""
    from pyspark.sql import functions as F

    from tests.lake.partitions import write_partitions
    from tests.quality.rows import frame

    rows = [event(event_time=dt.datetime(year, 1, 1, tzinfo=dt.UTC)) for year in (1000, 3000)]
    beyond = frame(spark, rows[:1]).withColumn("event_time", F.timestamp_micros(F.lit(1_700_000_000_000 * 1_000_000)))
    write_partitions(frame(spark, rows).unionByName(beyond), str(tmp_path / "far" / CHANGES_DIR))
    local = LocalEngine().day_quality(str(tmp_path / "far"), DT, THRESHOLDS, {}, None)
    assert json.loads(local.to_json()) == json.loads(
        SparkEngine(spark).day_quality(str(tmp_path / "far"), DT, THRESHOLDS, {}, None).to_json()
    )
    reasons = {e["reason"] for e in local.results[1].examples}
    assert reasons == {
        "event_time 1000-01-01T00:00:00Z is before 2000-01-01",
        "event_time 3000-01-01T00:00:00Z is in the future",
        "event_time 1700000000000000000 us after 1970-01-01 is in the future",
    }


def test_the_hand_built_day_fails_every_sub_check(engine, lakes):
    """What the comparison above covers: every sub-check fails and every info flag is set somewhere, the
    lags fill the histogram, the counts do not balance and a Kafka offset gap is found."""
    judged = engine.day_quality(lakes["rules"], DT, THRESHOLDS, {}, None)
    by_rule = {r.rule: r for r in judged.results}
    for rule in ("image_presence_check", "timestamp_precision_check", "pk_consistency_check"):
        assert all(c["failed"] for c in by_rule[rule].checks.values()), (rule, by_rule[rule].checks)
        assert all(by_rule[rule].info.get(n) for n in ("key_changes", "no_pk_table_events", "pk_not_named_events")
                   if rule == "pk_consistency_check")  # fmt: skip
    conservation = by_rule["conservation_check"]
    assert conservation.checks["balance"]["failed"] and conservation.checks["kafka_offsets"]["failed"]
    lag = judged.activity.lag["orders"]
    assert sum(1 for n in lag.histogram.values() if n) == 6 and lag.negative == 2
    assert judged.activity.outside_day["orders"] >= 3


def test_quality_command_judges_a_small_local_day_without_a_jvm(tmp_path, capsys, monkeypatch):
    """`quality --no-gx` of a small local day asks for no Spark session, and writes the report."""
    from cdc_pipelines.cli import commands

    def no_spark(*args, **kwargs):
        raise AssertionError("a Spark session was asked for")

    monkeypatch.setattr(commands, "_spark", no_spark)

    lake, bad = tmp_path / "lake", tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    files = [*list_input_files([str(sample_folder("oms-canal"))]), str(bad)]
    decode_with_processes("oms-canal", files, topic="t", dt=DT, out=lake)
    assert commands.main(["quality", "--canonical", str(lake), "--dt", DT, "--no-gx"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    summary = json.loads((lake / "reports" / f"dt={DT}" / "summary.json").read_text())
    info = summary["rules"]["conservation_check"]["info"]
    assert info["reject_reasons"] == [{"reason": "not a valid JSON object", "count": 1}]
    assert info["read"] == info["decoded"] + 1 and info["balance_checked"]
    # the canal seed names PK columns its images lack (tests/quality/test_samples.py)
    assert last == {"image_presence_check": True, "timestamp_precision_check": True, "pk_consistency_check": False,
                    "conservation_check": info["reject_rate"] <= 0.05}  # fmt: skip


def test_events_at_the_edges_of_the_rules(judged):
    """An event time a microsecond past year 9999, a changed-columns list of a number and one that is not
    JSON: judged, each the same way by both engines (the list that is not an array of names says nothing)."""
    last = dt.datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.UTC)
    rows = [
        event(event_time=last, event_id="last", sync_time=None),
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}, meta={"cdc.changed_columns": "[1]"},
              event_id="number"),
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}, meta={"cdc.changed_columns": "id"}),
    ]  # fmt: skip
    results = judged(rows)
    assert [(e["id"], e["reason"]) for e in results["timestamp_precision_check"].examples] == [
        ("last", "event_time 9999-12-31T23:59:59Z is in the future")
    ]
    pk = results["pk_consistency_check"]
    assert [(e["id"], e["reason"]) for e in pk.examples] == [
        ("number", "PK changed but cdc.changed_columns omits it: id")
    ]
    assert pk.info["key_changes"] == 1  # the list that is not JSON: a key change, not a failure


def test_a_day_judged_by_two_processes_as_by_one(lakes, tmp_path, monkeypatch):
    """The local engine's pool (every n-th row group, or batch, to each process, the tallies and flags merged
    back in the day's order) gives the figures and the GX outcomes of one process, on the day failing every
    sub-check."""
    from cdc_pipelines.engines import local
    from cdc_pipelines.runtime import processes

    alone = LocalEngine().day_quality(lakes["rules"], DT, THRESHOLDS, {}, tmp_path / "alone")
    monkeypatch.setattr(processes, "POOL_MIN_ROWS", 1)
    monkeypatch.setattr(local, "BATCH_ROWS", 7)
    pooled = LocalEngine(processes=2).day_quality(lakes["rules"], DT, THRESHOLDS, {}, tmp_path / "pooled")
    assert json.loads(pooled.to_json()) == json.loads(alone.to_json())
