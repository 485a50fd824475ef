"""A large local extract decoded by a pool of processes: the same lake as the in-process decode (which
`test_runner` holds to Spark's), whatever ranges the files are cut into."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import random
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

import cdc_pipelines.decode.pool as pool
from cdc_pipelines.cli.commands import main
from cdc_pipelines.decode.pool import MAX_BYTES_SETTING, decode_with_processes, file_lines, local_engine
from cdc_pipelines.demo import extracts as demo
from cdc_pipelines.formats import SELF_CONTAINED
from cdc_pipelines.model.table_filter import TableFilter
from cdc_pipelines.samples import sample_folder
from tests.decode.test_in_process import _rows, canal, changelog
from tests.decode.test_runner import SPLIT_FORMATS
from tests.formats.test_dataworks_json import halves_across_files, halves_of_a_reused_key
from tests.killed import kill_once_files_land

TABLES = ("changes", "rejects", "counts")
ROOT = Path(__file__).parent.parent.parent


def _lake(root) -> dict[str, list[dict]]:
    """Each table's rows, sorted."""
    out = {}
    for name in TABLES:
        rows = DeltaTable(str(root / name)).to_pyarrow_table().to_pylist()
        out[name] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    return out


def _both(tmp_path, format_id: str, files, workers: int = 1, **kw) -> tuple[dict, dict]:
    files = [str(f) for f in files]
    whole = [line for f in files for line in file_lines(f, format_id)]  # read whole, by the other line reader
    local = decode_with_processes(format_id, (), topic="t", dt="2024-01-01", out=str(tmp_path / "one"), lines=whole,
                                  **kw)  # fmt: skip
    pooled = pool.decode_with_processes(format_id, files, topic="t", dt="2024-01-01", out=str(tmp_path / "pool"),
                                        workers=workers, **kw)  # fmt: skip
    assert pooled == local
    return _lake(tmp_path / "pool"), _lake(tmp_path / "one")


@pytest.fixture
def small_ranges(monkeypatch):
    """Ranges of a few lines, reads of a few hundred bytes and batches of three lines: every file is cut
    many times."""
    monkeypatch.setattr(pool, "RANGE_BYTES", 700)
    monkeypatch.setattr(pool, "READ_BYTES", 300)
    monkeypatch.setattr(pool, "BATCH_LINES", 3)


@pytest.mark.parametrize("format_id", SELF_CONTAINED)
def test_every_format_sample_decodes_as_in_process(tmp_path, small_ranges, format_id):
    folder = sample_folder(format_id)
    files = [f for f in sorted(folder.iterdir()) if f.is_file() and pool.splittable(str(f), format_id)]
    files.append(tmp_path / "bad.jsonl")
    files[-1].write_bytes(b"not json\r\n\r\n{}\rnot json either")  # CRLF, an empty line, a lone CR, no last LF
    pooled, local = _both(tmp_path, format_id, files)
    assert pooled == local
    assert len(pooled["rejects"]) >= 4


@pytest.mark.parametrize("format_id", SPLIT_FORMATS)
def test_split_update_halves_pair_across_ranges_and_files(tmp_path, small_ranges, format_id):
    events = [e for d in range(2) for e in demo.canonical_events(dt.date(2024, 1, 1) + dt.timedelta(days=d), 60)]
    demo.write_extract(format_id, events[:70], tmp_path / "a.jsonl")
    demo.write_extract(format_id, events[70:], tmp_path / "b.jsonl")
    pooled, local = _both(tmp_path, format_id, [tmp_path / "a.jsonl", tmp_path / "b.jsonl"])
    assert pooled == local
    assert len(pool.byte_ranges([str(tmp_path / "a.jsonl")], 1)) > 3


def test_halves_of_a_reused_key_and_orphans(tmp_path, small_ranges):
    a, b = halves_across_files()
    (tmp_path / "a.jsonl").write_text("\n".join([*halves_of_a_reused_key(), *a]) + "\n")
    (tmp_path / "b.jsonl").write_text("\n".join(b) + "\n")
    # two processes: the halves are paired in two buckets of their keys
    pooled, local = _both(tmp_path, "dataworks-json", [tmp_path / "a.jsonl", tmp_path / "b.jsonl"], workers=2)
    assert pooled == local
    assert any("without its matching after half" in r for r in pooled["rejects"])


def test_two_processes_filter_tables_and_read_compressed_files_whole(tmp_path, small_ranges):
    """A table filter, a `.gz` file among plain ones and split-update halves of a filtered table: two processes
    write what one process reading every line whole writes, and the filtered messages are counted."""
    events = list(demo.canonical_events(dt.date(2024, 1, 1), 60))
    demo.write_extract("dataworks-json", events[:40], tmp_path / "a.jsonl")
    demo.write_extract("dataworks-json", events[40:], tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress((tmp_path / "b.jsonl").read_bytes()))
    (tmp_path / "b.jsonl").unlink()
    tables = TableFilter.of(exclude=[f"{db}.{table}" for db, table in list(demo.TABLES)[:1]])
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"]
    pooled, local = _both(tmp_path, "dataworks-json", files, workers=2, tables=tables)
    assert pooled == local
    (counts,) = (json.loads(r) for r in pooled["counts"])
    tables_left = {(json.loads(r)["db"], json.loads(r)["table_name"]) for r in pooled["changes"]}
    assert counts["filtered"] > 0 and counts["read"] == counts["decoded"] + counts["rejected"] + counts["filtered"]
    assert tables_left - {(None, None)} == set(list(demo.TABLES)[1:])  # a heartbeat names no table: kept


def test_two_processes_mark_redeliveries_across_ranges_and_a_rerun_replaces_the_day(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "RANGE_BYTES", 20_000)  # the parent cuts the ranges; the processes read them
    lines = [canal(n) for n in range(200)] + ["{broken"] + [canal(7), canal(150, ts_delay=900)]
    extract = tmp_path / "orders.jsonl"
    extract.write_text("\n".join(lines) + "\n")
    lake = tmp_path / "lake"
    for topic in ("orders", "other", "orders"):
        counts = pool.decode_with_processes("oms-canal", [str(extract)], topic=topic, dt="2024-01-01", out=str(lake),
                                            workers=2)  # fmt: skip

    assert counts == {"read": 203, "decoded": 202, "rejected": 1, "filtered": 0, "events": 202}
    assert len(pool.byte_ranges([str(extract)], 2)) >= 4
    events = [e for e in _rows(lake / "changes") if e["source_topic"] == "orders"]
    assert changelog(events)[-2:] == ["202:+I[3, n7]~8", "203:+I[2, n150]~151"]
    assert sum(e["source_topic"] == "other" for e in _rows(lake / "changes")) == 202
    assert DeltaTable(str(lake / "changes")).version() == 3  # the table's creation, then one commit per run
    assert sorted(r["source_topic"] for r in _rows(lake / "rejects")) == ["orders", "other"]
    extract.write_text("\n".join(lines[:200]) + "\n")  # a rerun without the bad line: its reject goes
    pool.decode_with_processes("oms-canal", [str(extract)], topic="orders", dt="2024-01-01", out=str(lake), workers=2)
    assert [r["source_topic"] for r in _rows(lake / "rejects")] == ["other"]


def test_ranges_number_lines_as_splitlines_does(tmp_path, monkeypatch):
    """Random text of LF, CRLF, lone CR and empty lines, cut anywhere: each range's lines, numbered from
    the counts of the ranges before it, are the file's lines."""
    monkeypatch.setattr(pool, "READ_BYTES", 7)
    pieces = [b"a", b"bc", b"\n", b"\r\n", b"\r", b"", b"{}"]
    for seed in range(200):
        rng = random.Random(seed)
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 60)))
        path = tmp_path / "f.jsonl"
        path.write_bytes(data)
        monkeypatch.setattr(pool, "RANGE_BYTES", rng.randrange(1, 40))
        ranges = pool.byte_ranges([str(path)], rng.randrange(1, 4))
        numbered = pool.numbered_ranges(ranges, [pool.count_lines(r) for r in ranges])
        lines = [(r.first_line, b"".join(pool.range_blocks(r)).splitlines()) for r in numbered]
        got = [(first + i, line) for first, some in lines for i, line in enumerate(some)]
        assert got == list(enumerate(data.splitlines(), start=1)), data


def test_which_extracts_the_pool_decodes(tmp_path):
    plain, packed = tmp_path / "a.jsonl", tmp_path / "a.jsonl.gz"
    plain.write_text("{}\n")
    packed.write_bytes(b"")
    out, larger = str(tmp_path / "lake"), {MAX_BYTES_SETTING: "0", pool.PROCESSES_SETTING: "2"}

    def engine(inputs, out, conf):
        return local_engine(inputs, out, larger | conf)

    assert engine([str(plain)], out, {}) == (2, [str(plain)])
    assert engine([str(plain)], out, {pool.PROCESSES_SETTING: "0"}) == (0, [])
    assert engine([str(tmp_path)], out, {}) == (2, [str(plain), str(packed)])  # a .gz among the files: read whole
    assert engine([str(plain)], "s3a://bucket/lake", {}) == (0, [])
    assert not pool.splittable("x.csv", "datahub-tuple") and pool.splittable("x.jsonl", "datahub-tuple")
    assert not pool.splittable("x.avro", "dts-avro")
    sources = pool.sources_of([str(plain), str(packed)], "oms-canal", 2)
    assert [type(s).__name__ for s in sources] == ["ByteRange", "WholeFile"]


def test_the_cli_decodes_a_larger_extract_with_the_pool_and_no_spark_session(tmp_path, capsys, monkeypatch):
    import cdc_pipelines.runtime.session as session

    monkeypatch.setattr(session, "spark_session", lambda *a, **k: pytest.fail("a Spark session was started"))
    extract = tmp_path / "orders.jsonl"
    extract.write_text("\n".join(canal(n) for n in range(50)) + "\n")
    args = [
        "decode",
        "--format",
        "oms-canal",
        "--out",
        str(tmp_path / "lake"),
        "--topic",
        "orders",
        "--dt",
        "2024-01-01",
        "--conf",
        f"{MAX_BYTES_SETTING}=100",
        "--conf",
        f"{pool.PROCESSES_SETTING}=1",
    ]
    assert main([*args, str(extract)]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["events"] == 50
    assert len(_rows(tmp_path / "lake" / "changes")) == 50


@pytest.mark.system
def test_a_pool_decode_killed_while_writing_keeps_the_committed_version(tmp_path):
    """SIGKILL to the command and its processes once their Parquet files are landing: the Delta log still
    ends at the committed version, and the next run commits over the debris."""
    lake, extract = tmp_path / "lake", tmp_path / "orders.jsonl"
    extract.write_text("\n".join(canal(n) for n in range(5)) + "\n")
    pool.decode_with_processes("oms-canal", [str(extract)], topic="orders", dt="2024-01-01", out=str(lake), workers=1)
    version, committed = DeltaTable(str(lake / "changes")).version(), _rows(lake / "changes")
    extract.write_text("\n".join(canal(n) for n in range(60_000)) + "\n")
    command = [sys.executable, "-m", "cdc_pipelines.cli", "decode", "--format", "oms-canal", "--out", str(lake),
               "--topic", "orders", "--dt", "2024-01-01", "--conf", f"{MAX_BYTES_SETTING}=100",
               "--conf", f"{pool.PROCESSES_SETTING}=2", str(extract)]  # fmt: skip
    kill_once_files_land(command, {**os.environ, "PYTHONPATH": str(ROOT)}, lake / "changes", seconds=120)
    assert DeltaTable(str(lake / "changes")).version() == version
    assert _rows(lake / "changes") == committed
    counts = pool.decode_with_processes("oms-canal", [str(extract)], topic="orders", dt="2024-01-01", out=str(lake),
                                        workers=2)  # fmt: skip
    assert counts["events"] == len(_rows(lake / "changes")) == 60_000
    assert DeltaTable(str(lake / "changes")).version() == version + 1
