"""A small local extract is decoded and committed without Spark, into the same Delta tables."""

from __future__ import annotations

import json

import pytest
from deltalake import DeltaTable

from cdc_pipelines.cli.commands import main
from cdc_pipelines.decode.pool import MAX_BYTES_SETTING, PROCESSES_SETTING, decode_with_processes, local_engine
from cdc_pipelines.engines.choice import DECODE, LOCAL, SPARK, Run, choose
from cdc_pipelines.model.meta_keys import DUPLICATE_OF
from cdc_pipelines.runtime.session import MASTER_ENV

TYPES = {"mysqlType": {"id": "int", "name": "varchar(8)"}, "sqlType": {"id": 4, "name": 12}, "pkNames": ["id"]}


def canal(n: int, op: str = "INSERT", name: str | None = None, ts_delay: int = 5) -> str:
    return json.dumps({"data": [{"id": str(n % 4), "name": name or f"n{n}"}], "database": "shop", "table": "orders",
                       "type": op, "es": 1704067200000 + n, "ts": 1704067200000 + n + ts_delay, "isDdl": False,
                       "sql": "", "old": [{"name": "x"}] if op == "UPDATE" else None, **TYPES})  # fmt: skip


@pytest.fixture
def extract(tmp_path):
    """Lines 1-4 inserts, 5-6 updates, 7 line 2 again, 8 line 5 replayed later (canal's `ts` differs:
    a delivery field), 9 broken, 10 a delete."""
    lines = [canal(n) for n in range(4)] + [canal(n, "UPDATE", f"u{n}") for n in (4, 5)]
    lines += [lines[1], canal(4, "UPDATE", "u4", ts_delay=900), "{broken", canal(9, "DELETE")]
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _rows(path) -> list[dict]:
    rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: (r["source_topic"], r.get("source_file", ""), r.get("source_line", 0)))


def changelog(events: list[dict]) -> list[str]:
    """`line:+I[id, name]` per event, `~line` appended to a redelivery naming the line it repeats."""
    lines = {e["event_id"]: e["source_line"] for e in events}
    out = []
    for e in events:
        image = dict(e["after"] or e["before"] or [])
        mark = dict(e["meta"] or []).get(DUPLICATE_OF)
        kind = {"INSERT": "+I", "UPDATE": "+U", "DELETE": "-D"}[e["op"]]
        out.append(f"{e['source_line']}:{kind}[{image['id']}, {image['name']}]" + (f"~{lines[mark]}" if mark else ""))
    return out


def test_decode_writes_the_lake_marks_redeliveries_and_counts(tmp_path, extract):
    lake = tmp_path / "lake"
    counts = decode_with_processes("oms-canal", [str(extract)], topic="orders", dt="2024-01-01", out=str(lake))

    assert counts == {"read": 10, "decoded": 9, "rejected": 1, "filtered": 0, "events": 9}
    events = _rows(lake / "changes")
    assert changelog(events) == [
        "1:+I[0, n0]", "2:+I[1, n1]", "3:+I[2, n2]", "4:+I[3, n3]", "5:+U[0, u4]", "6:+U[1, u5]",
        "7:+I[1, n1]~2", "8:+U[0, u4]~5", "10:-D[1, n9]",
    ]  # fmt: skip
    assert {(e["dt"], e["source_topic"], e["source_format"]) for e in events} == {("2024-01-01", "orders", "oms-canal")}
    assert events[0]["event_time"].isoformat() == "2024-01-01T00:00:00+00:00"
    assert dict(events[0]["column_types"]) == {"id": "INT", "name": "STRING"}
    rejects = _rows(lake / "rejects")
    assert [(r["source_line"], r["raw"], r["reason"]) for r in rejects] == [(9, "{broken", "not a valid JSON object")]
    assert [{k: r[k] for k in ("read", "events", "source_topic")} for r in _rows(lake / "counts")] == [
        {"read": 10, "events": 9, "source_topic": "orders"}
    ]


def test_a_rerun_replaces_its_partition_and_leaves_other_topics(tmp_path, extract):
    lake = tmp_path / "lake"
    for topic in ("orders", "other", "orders"):
        decode_with_processes("oms-canal", [str(extract)], topic=topic, dt="2024-01-01", out=str(lake))

    events = _rows(lake / "changes")
    assert {t: sum(e["source_topic"] == t for e in events) for t in ("orders", "other")} == {"orders": 9, "other": 9}
    assert DeltaTable(str(lake / "changes")).version() == 3  # the table's creation, then one commit per run
    assert len(_rows(lake / "counts")) == 2


def test_which_extracts_are_decoded_in_process(tmp_path, extract, monkeypatch):
    files = [str(extract)]
    engine = local_engine

    assert engine([str(extract)], str(tmp_path), {}) == (1, files)
    assert engine([str(tmp_path)], str(tmp_path), {}) == (1, files)  # a folder's files
    assert engine([str(extract)], str(tmp_path), {MAX_BYTES_SETTING: "0", PROCESSES_SETTING: "2"}) == (2, files)
    assert engine([str(extract)], str(tmp_path), {MAX_BYTES_SETTING: "100", PROCESSES_SETTING: "3"}) == (3, files)
    assert engine([str(extract)], str(tmp_path), {MAX_BYTES_SETTING: "100", PROCESSES_SETTING: "0"}) == (0, [])
    assert engine([str(extract)], "s3a://bucket/lake", {}) == (0, [])
    assert engine([str(extract)], str(tmp_path / "a%20b"), {}) == (0, [])  # delta-rs reads %20 as a space
    # whether the settings ask for Spark is the engine table's question: `decode`, `sample` and `convert` ask it
    monkeypatch.delenv(MASTER_ENV, raising=False)

    def chosen(conf, command_conf=()):
        return choose(Run(DECODE, str(tmp_path), None, conf, command_conf, inputs=tuple(files), format_id="oms-canal"))

    catalog = {"spark.cdc.catalog.database": "cdc"}
    assert chosen(catalog, catalog) == SPARK  # a Spark setting on the command
    assert chosen({"spark.master": "spark://host:7077"}) == SPARK
    assert chosen({"spark.master": "local[2]"}) == LOCAL  # a local master asks for no cluster
    assert chosen({"spark.sql.shuffle.partitions": "4"}) == LOCAL
    assert engine([str(extract)], str(tmp_path), {"spark.sql.shuffle.partitions": "4"}) == (1, files)


def test_the_cli_decodes_a_small_extract_without_a_spark_session(tmp_path, extract, capsys, monkeypatch):
    import cdc_pipelines.runtime.session as session

    monkeypatch.setattr(session, "spark_session", lambda *a, **k: pytest.fail("a Spark session was started"))
    assert main(["decode", "--format", "oms-canal", "--out", str(tmp_path / "lake"), "--topic", "orders",
                 "--dt", "2024-01-01", str(extract)]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["events"] == 9
    assert len(_rows(tmp_path / "lake" / "changes")) == 9
