"""The `cdc-pipelines` command: formats, decode, summary line and errors."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import cdc_pipelines
from cdc_pipelines.cli.commands import main
from cdc_pipelines.formats import FORMAT_IDS
from cdc_pipelines.lake.io import read_canonical, read_rejects
from cdc_pipelines.lake.run_counts import read_counts
from tests.conftest import resource
from tests.formats.seed_values import DOUBLE_MIN_EXPANSION


def test_formats_lists_every_id():
    out = subprocess.run(
        [sys.executable, "-m", "cdc_pipelines.cli", "formats"], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == list(FORMAT_IDS)
    assert {"oms-default", "oms-canal", "oms-debezium-smt"} <= set(FORMAT_IDS)


def test_decode_writes_partitioned_parquet_and_summary(spark, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    code = main(
        [
            "decode",
            "--format",
            "oms-canal",
            "--out",
            str(tmp_path / "out"),
            "--topic",
            "orders",
            "--dt",
            "2024-03-01",
            str(resource("oms-canal", "seed.jsonl")),
            str(bad),
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary == {"read": 5, "decoded": 4, "rejected": 1, "filtered": 0, "events": 4}
    assert read_counts(spark, tmp_path / "out", "2024-03-01") == {"orders": summary}
    part = tmp_path / "out" / "changes" / "dt=2024-03-01" / "source_topic=orders"
    assert any(p.suffix == ".parquet" for p in part.iterdir())
    changes = read_canonical(spark, tmp_path / "out" / "changes")
    insert = changes.where("op = 'INSERT'").first()
    assert insert.after["col4"] == DOUBLE_MIN_EXPANSION and insert.after["col13"] == "10223372036854775806"
    assert (insert.dt, insert.source_topic) == ("2024-03-01", "orders")
    rejects = read_rejects(spark, tmp_path / "out" / "rejects").collect()
    assert [(r.raw, r.reason, r.source_line) for r in rejects] == [("garbage", "not a valid JSON object", 1)]


def test_rerun_replaces_the_partition(spark, tmp_path, capsys):
    args = [
        "decode",
        "--format",
        "oms-default",
        "--out",
        str(tmp_path),
        "--dt",
        "2024-03-02",
        str(resource("oms-default", "seed.jsonl")),
    ]
    assert main(args) == 0 and main(args) == 0
    assert read_canonical(spark, tmp_path / "changes").count() == 4


def test_unknown_format_and_missing_input_fail_clearly(tmp_path, capsys):
    assert main(["decode", "--format", "nope", "--out", str(tmp_path), str(tmp_path)]) == 2
    assert "unknown format id 'nope'" in capsys.readouterr().err
    assert main(["decode", "--format", "oms-canal", "--out", str(tmp_path), str(tmp_path / "missing.jsonl")]) == 2
    assert "input does not exist" in capsys.readouterr().err
    assert (
        main(["decode", "--format", "oms-canal", "--option", "colour=red", "--out", str(tmp_path), str(tmp_path)]) == 2
    )
    assert "has no option colour" in capsys.readouterr().err


def test_decode_takes_the_message_size_limit(spark, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CDC_MAX_MESSAGE_CHARS", str(16 * 1024 * 1024))  # restored after the test
    seed = resource("oms-canal", "seed.jsonl")
    longest = max(len(line) for line in seed.read_text().splitlines())
    out = tmp_path / "out"
    args = ["decode", "--format", "oms-canal", "--out", str(out), "--dt", "2024-03-01", str(seed)]
    assert main([*args[:1], "--max-message-chars", str(longest - 1), *args[1:]]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["rejected"] >= 1 and summary["read"] == summary["decoded"] + summary["rejected"]
    reasons = {r.reason for r in read_rejects(spark, out / "rejects").collect()}
    assert f"message of {longest} characters is over the limit of {longest - 1}" in reasons
    with pytest.raises(SystemExit):
        main([*args[:1], "--max-message-chars", "0", *args[1:]])
    assert "not a positive whole number" in capsys.readouterr().err


class _Started(Exception):
    """The command got as far as starting Spark."""


@pytest.fixture
def session_settings(monkeypatch) -> dict:
    """The settings the command starts its session with (the start itself stopped by `_Started`)."""
    import cdc_pipelines.runtime.session as session

    seen = {}

    def started(conf=None, **_):
        seen.update(conf)
        raise _Started

    monkeypatch.setattr(session, "spark_session", started)
    monkeypatch.delenv(session.SPARK_CONF_ENV, raising=False)
    monkeypatch.delenv(session.MASTER_ENV, raising=False)  # a master named asks for Spark
    return seen


@pytest.mark.parametrize(("min_bytes", "full"), [(100, True), (1 << 40, False)])
def test_a_decode_past_the_full_jit_size_starts_both_compilers(
    tmp_path, monkeypatch, session_settings, min_bytes, full
):
    import cdc_pipelines.runtime.session as session

    monkeypatch.setattr(session, "FULL_JIT_MIN_BYTES", min_bytes)
    seed = resource("oms-canal", "seed.jsonl")
    assert seed.stat().st_size > 100
    args = ["--out", str(tmp_path), "--topic", "t", "--dt", "2024-03-01", "--conf", "cdc.decode.in_process_max_bytes=0",
            "--conf", "cdc.decode.processes=0"]  # fmt: skip
    with pytest.raises(_Started):
        main(["decode", "--format", "oms-canal", *args, str(seed)])
    assert (session_settings.get(session.C1_ONLY) == "false") is full


def test_a_decode_of_a_large_extract_starts_with_its_split_size(tmp_path, monkeypatch, session_settings):
    import cdc_pipelines.runtime.session as session

    monkeypatch.setattr(session, "DEFAULT_SPLIT_BYTES", 1024)
    seed = resource("oms-canal", "seed.jsonl")
    args = ["--out", str(tmp_path), "--topic", "t", "--dt", "2024-03-01", "--conf", "cdc.decode.in_process_max_bytes=0",
            "--conf", "spark.master=local[2]"]  # fmt: skip
    with pytest.raises(_Started):
        main(["decode", "--format", "oms-canal", *args, str(seed)])
    split = int(session_settings[session.SPLIT_SETTING])
    assert seed.stat().st_size > 2 * 1024 and split <= 1024 and -(-seed.stat().st_size // split) % 2 == 0


@pytest.mark.parametrize(("min_events", "full"), [(3, True), (4, False)])
def test_a_snapshot_of_more_events_than_the_full_jit_count_starts_both_compilers(
    tmp_path, monkeypatch, session_settings, min_events, full
):
    import cdc_pipelines.runtime.session as session
    from cdc_pipelines.decode.pool import decode_with_processes
    from cdc_pipelines.lake.delta_rs import partition_counts

    seed = str(resource("oms-canal", "seed.jsonl"))
    for day in ("2024-03-01", "2024-03-02"):
        decode_with_processes("oms-canal", [seed], topic="t", dt=day, out=str(tmp_path))
    rows_by_day = partition_counts(str(tmp_path / "changes"), "dt")
    per_day = rows_by_day["2024-03-02"]
    assert rows_by_day == {"2024-03-01": per_day, "2024-03-02": per_day} and per_day
    monkeypatch.setattr(session, "FULL_JIT_MIN_EVENTS", min_events * per_day // 2)  # the day and the later one
    with pytest.raises(_Started):
        main(["snapshot", "--canonical", str(tmp_path), "--dt", "2024-03-01", "--engine", "spark"])
    assert (session_settings.get(session.C1_ONLY) == "false") is full


def test_encode_of_a_small_local_lake_starts_no_session(tmp_path, session_settings, capsys):
    """In process (`encode.in_process`); the limit 0, or a `spark.` setting on the command, starts Spark."""
    from cdc_pipelines.decode.pool import decode_with_processes

    decode_with_processes("oms-canal", [str(resource("oms-canal", "seed.jsonl"))], topic="t", dt="2024-03-01",
                      out=str(tmp_path))  # fmt: skip
    args = ["encode", "--to", "oms-default", "--out", str(tmp_path / "enc"), str(tmp_path / "changes")]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == {"events": 4, "written": 4, "skipped": 0}
    (written,) = (tmp_path / "enc" / "oms-default" / "dt=2024-03-01" / "source_topic=t").glob("part-*")
    assert len(written.read_text().splitlines()) == 4
    for setting in ("cdc.encode.in_process_max_events=0", "spark.sql.shuffle.partitions=1"):
        with pytest.raises(_Started):
            main([*args[:1], "--conf", setting, *args[1:]])
    assert main(["encode", "--to", "oms-default", "--out", str(tmp_path), str(tmp_path / "none")]) == 2
    assert "no canonical Delta table" in capsys.readouterr().err


def test_convert_of_small_local_files_starts_no_session(tmp_path, session_settings, capsys):
    """Decoded and encoded in process: the codec's messages of the decoded events, in input order; a
    table filter, or the in-process limit 0, starts Spark."""
    from tests.decode.oracles import decode_paths, encode_local

    seed = resource("oms-canal", "seed.jsonl")
    args = ["convert", "--from", "oms-canal", "--to", "dataworks-json", "--out", str(tmp_path), "--topic", "t",
            "--dt", "2024-03-01", str(seed)]  # fmt: skip
    assert main(args) == 0
    counts = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    events = decode_paths("oms-canal", [seed], topic="t", dt="2024-03-01").events
    messages, skipped = encode_local(events, "dataworks-json")
    (written,) = (tmp_path / "dataworks-json" / "dt=2024-03-01" / "source_topic=t").glob("part-*")
    assert written.read_text().splitlines() == [m for _, _, m in messages]
    assert counts == {"read": 4, "decoded": 4, "rejected": 0, "filtered": 0, "events": len(events),
                      "written": len(messages), "skipped": len(skipped)}  # fmt: skip
    for extra in (["--include", "shop.*"], ["--conf", "cdc.decode.in_process_max_bytes=0"]):
        with pytest.raises(_Started):
            main([*args[:1], *extra, *args[1:]])


def test_a_local_master_leaves_decode_sample_and_convert_to_the_local_engine(tmp_path, session_settings, monkeypatch):
    """The three ask the engine table alike: `spark.master=local[2]` names no cluster; a `spark.` setting on
    the command still asks for Spark."""
    import cdc_pipelines.runtime.session as session

    monkeypatch.setenv(session.SPARK_CONF_ENV, json.dumps({"spark.master": "local[2]"}))
    seed, common = str(resource("oms-canal", "seed.jsonl")), ["--out", str(tmp_path), "--dt", "2024-03-01"]
    assert main(["decode", "--format", "oms-canal", *common, seed]) == 0
    assert main(["sample", "--format", "oms-canal", *common]) == 0
    convert = ["convert", "--from", "oms-canal", "--to", "dataworks-json", *common, seed]
    assert main(convert) == 0
    with pytest.raises(_Started):
        main([*convert[:1], "--conf", "spark.sql.shuffle.partitions=2", *convert[1:]])


def test_the_library_never_imports_assets():
    """No import of `assets` or `resources` anywhere in `cdc_pipelines`, inside functions too (the
    `demo` command is added by `assets.cli`, the program's entry point)."""
    package = Path(cdc_pipelines.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [(path.name, n) for n in names if n.split(".")[0] in ("assets", "resources")]
    assert found == []


def test_the_program_adds_demo_to_the_librarys_commands(capsys):
    from assets.cli import main as program

    with pytest.raises(SystemExit):
        program(["demo", "--help"])
    assert "--per-day" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["demo"])  # the library alone has no demo
    assert "invalid choice: 'demo'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        program(["bench-daily", "--help"])
    assert "--messages" in capsys.readouterr().out


def test_sample_decodes_only_the_formats_asked_for(tmp_path, capsys):
    assert main(["sample", "--out", str(tmp_path), "--format", "oms-canal", "--format", "dts-avro"]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [line.get("format") for line in printed[:-1]] == ["oms-canal", "dts-avro"]
    assert printed[-1]["events"] == sum(line["events"] for line in printed[:-1]) > 0
