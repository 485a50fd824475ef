"""Days of a local lake re-encoded in this process: every target's messages as the codec encodes the
day's events, in input order, each partition replaced whole; the same files as Spark's encode writes."""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

import fastavro
import pytest
from deltalake import DeltaTable

from cdc_pipelines.decode.days import encode_days
from cdc_pipelines.decode.pool import decode_with_processes
from cdc_pipelines.encode.in_process import MAX_EVENTS_SETTING, encode_in_process, encodes_in_process
from cdc_pipelines.encode.runner import encode_events, write_encoded_by_day
from cdc_pipelines.formats import SELF_CONTAINED, get_codec
from cdc_pipelines.formats.dts_avro_records import container_schema
from cdc_pipelines.lake.io import read_canonical
from tests.conftest import resource
from tests.decode.oracles import decode_paths, encode_local

# (format, topic, day): two topics on one day, a third on the next; `schema` holds the canal seed's DDL
# alone, which some targets skip: its folder is left with no message
DAYS = (("oms-canal", "orders", "2024-01-01"), ("oms-debezium", "users", "2024-01-01"),
        ("dts-avro", "orders", "2024-01-02"), ("oms-canal", "schema", "2024-01-02"))  # fmt: skip
TARGETS = [f for f in SELF_CONTAINED if get_codec(f).encode is not None]


@dataclass
class Lake:
    root: Path
    events: dict[tuple[str, str], list[dict]]  # each partition's events, `(topic, day)`, as the codec decodes them


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    """A lake of four (day, topic) partitions, decoded in process."""
    root = tmp_path_factory.mktemp("lake")
    ddl = root / "ddl.jsonl"
    ddl.write_text("".join(line for line in resource("oms-canal", "seed.jsonl").open() if '"isDdl":true' in line))
    events = {}
    for format_id, topic, day in DAYS:
        source = str(ddl if topic == "schema" else resource(format_id, "seed.jsonl"))
        decode_with_processes(format_id, [source], topic=topic, dt=day, out=root)
        events[topic, day] = decode_paths(format_id, [source], topic=topic, dt=day).events
    assert [e["op"] for e in events["schema", "2024-01-02"]] == ["DDL"]
    return Lake(root, events)


def _expected(lake: Lake, topic: str, day: str, target: str) -> tuple[list, list[str]]:
    """The messages the codec encodes the partition's events into, in input order, and the skipped ids."""
    messages, skipped = encode_local(lake.events[topic, day], target)
    messages = [m for _, _, m in messages]
    return _records(messages) if get_codec(target).binary_messages else messages, [e["event_id"] for e, _ in skipped]


def _written(folder: Path) -> list:
    """A partition's messages as written: text lines, or the records of its `.avro` containers."""
    if not folder.exists():
        return []
    messages = []
    for path in sorted(p for p in folder.iterdir() if not p.name.startswith((".", "_"))):
        if path.suffix == ".avro":
            with open(path, "rb") as f:
                messages += list(fastavro.reader(f, return_record_name=True))
        else:
            messages += path.read_text(encoding="utf-8").splitlines()
    return messages


def _records(messages: list) -> list:
    """DTS Avro messages (schemaless records) as the containers' reader gives them back."""
    schema = fastavro.parse_schema(container_schema(False))
    return [fastavro.schemaless_reader(BytesIO(m), schema, return_record_name=True) for m in messages]


def _skipped(target: Path) -> list[tuple]:
    path = target / "_skipped"
    if not (path / "_delta_log").exists():
        return []
    rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    return sorted((r["dt"], r["source_topic"], r["event_id"], r["target"], bool(r["skip_reason"])) for r in rows)


@pytest.mark.parametrize("target", TARGETS)
def test_each_target_holds_the_codecs_messages_in_input_order(lake, tmp_path, target):
    """Every partition's messages; a partition whose events the target skips all has no folder."""
    out = tmp_path / target

    counts = encode_in_process(str(lake.root / "changes"), str(out), target)

    skipped, totals = [], {}
    for _, topic, day in DAYS:
        messages, ids = _expected(lake, topic, day, target)
        folder = out / f"dt={day}" / f"source_topic={topic}"
        assert _written(folder) == messages, (topic, day, target)
        assert folder.is_dir() is bool(messages), (topic, day, target)
        skipped += [(day, topic, i, target, True) for i in ids]
        total = totals.setdefault(day, {"written": 0, "skipped": 0, "encoded": 0})
        total["written"] += len(messages)
        total["skipped"] += len(ids)
        total["encoded"] += len(lake.events[topic, day]) - len(ids)
    assert _skipped(out) == sorted(skipped)
    assert counts == totals


def test_a_rerun_replaces_its_partitions_only(lake, tmp_path):
    """The partitions read lose an earlier run's files and skips (a folder left with no message goes); a day
    or topic not read keeps its files."""
    changes, out = str(lake.root / "changes"), tmp_path / "oms-debezium-smt"
    encode_in_process(changes, str(out), "oms-debezium-smt")
    users, orders = (out / "dt=2024-01-01" / f"source_topic={t}" for t in ("users", "orders"))
    (users / "part-99999-stale.txt").write_text("stale\n")
    (users / "_SUCCESS").write_text("")
    schema = out / "dt=2024-01-02" / "source_topic=schema"  # only a DDL, which DebeziumSmt skips
    schema.mkdir(parents=True)
    (schema / "part-00000-stale.txt").write_text("stale\n")
    stale_day = out / "dt=2023-12-31" / "source_topic=orders"
    stale_day.mkdir(parents=True)
    (stale_day / "part-00000.txt").write_text("kept\n")
    before, version = _skipped(out), DeltaTable(str(out / "_skipped")).version()

    counts = encode_in_process(changes, str(out), "oms-debezium-smt")

    assert _written(users) == _expected(lake, "users", "2024-01-01", "oms-debezium-smt")[0]
    assert [p.name for p in users.iterdir() if not p.name.startswith("part-")] == []  # the folder replaced whole
    assert not schema.exists()
    assert (stale_day / "part-00000.txt").read_text() == "kept\n"
    assert list(counts) == ["2024-01-01", "2024-01-02"]
    assert _skipped(out) == before  # the same skips, replaced in a new version, not doubled
    assert DeltaTable(str(out / "_skipped")).version() == version + 1
    assert not [p for p in out.rglob(".*")]  # nothing left aside

    files = sorted(p.name for p in users.iterdir())
    only = encode_in_process(changes, str(out), "oms-debezium-smt", ["2024-01-01"], ["orders"])
    assert sorted(p.name for p in users.iterdir()) == files  # another topic's partition left as it was
    assert only["2024-01-01"]["written"] == len(_written(orders)) > 0
    assert _skipped(out) == before


@pytest.mark.parametrize("target", ["oms-canal", "dts-avro"])
def test_two_processes_write_what_one_writes(lake, tmp_path, monkeypatch, target):
    """Batches of 2 events dealt out to two processes: the same files and counts as this process alone."""
    from cdc_pipelines.encode import in_process
    from cdc_pipelines.runtime import processes

    monkeypatch.setattr(in_process, "BATCH_ROWS", 2)
    monkeypatch.setattr(processes, "POOL_MIN_ROWS", 1)
    changes = str(lake.root / "changes")
    one = encode_in_process(changes, str(tmp_path / "one" / target), target)

    two = encode_in_process(changes, str(tmp_path / "two" / target), target, processes=2)

    assert two == one
    assert _files(tmp_path / "two" / target) == _files(tmp_path / "one" / target)
    for _, topic, day in DAYS:
        folder = Path(f"dt={day}") / f"source_topic={topic}"
        assert _written(tmp_path / "two" / target / folder) == _written(tmp_path / "one" / target / folder)
    assert _skipped(tmp_path / "two" / target) == _skipped(tmp_path / "one" / target)


def test_each_process_encodes_its_own_batches_of_one_version(lake):
    """Two shares of batches of 2 events: disjoint, together every batch, in the table's order; the setting
    of the processes read as a whole number, at least 1."""
    from cdc_pipelines.encode.in_process import PROCESSES_SETTING, _encode_share, _Share, encode_processes
    from cdc_pipelines.runtime.settings import SettingError

    changes = str(lake.root / "changes")
    version = DeltaTable(changes).version()
    days = ("2024-01-01", "2024-01-02")
    shares = [_encode_share(_Share(changes, version, days, None, "oms-canal", {}, k, 2, 2)) for k in range(2)]
    alone = _encode_share(_Share(changes, version, days, None, "oms-canal", {}, 0, 1, 2))

    indexes = [[i for i, _ in share] for share in shares]
    assert all(indexes) and not set(indexes[0]) & set(indexes[1])
    assert sorted(indexes[0] + indexes[1]) == [i for i, _ in alone]
    together = sorted((part for share in shares for part in share), key=lambda p: p[0])
    assert [b.to_pylist() for _, b in together] == [b.to_pylist() for _, b in alone]
    assert encode_processes({PROCESSES_SETTING: "0"}) == 1 and encode_processes({PROCESSES_SETTING: "3"}) == 3
    assert encode_processes({}) >= 1
    with pytest.raises(SettingError):
        encode_processes({PROCESSES_SETTING: "two"})


def test_the_choice_follows_the_setting_and_the_lake(lake, tmp_path):
    changes, target = str(lake.root / "changes"), str(tmp_path / "t")
    events = DeltaTable(changes).to_pyarrow_table().num_rows

    assert encodes_in_process(changes, target, None, {})
    assert encodes_in_process(changes, target, ["2024-01-02"], {MAX_EVENTS_SETTING: "6"})
    assert not encodes_in_process(changes, target, ["2024-01-02"], {MAX_EVENTS_SETTING: "5"})
    assert not encodes_in_process(changes, target, None, {MAX_EVENTS_SETTING: str(events - 1)})
    assert encodes_in_process(changes, target, None, {MAX_EVENTS_SETTING: str(events)})
    assert not encodes_in_process(changes, target, None, {MAX_EVENTS_SETTING: "0"})
    assert not encodes_in_process(changes, "s3a://bucket/t", None, {})
    assert not encodes_in_process(str(tmp_path / "none"), target, None, {})


def test_the_daily_asset_encodes_a_local_day_without_a_session(lake, tmp_path):
    def session():
        raise AssertionError("a local day asked for Spark")

    days = ["2024-01-01", "2024-01-03"]
    by_day = encode_days(session, lake.root, "oms-canal", ["orders", "users"], days, local_conf={})

    written = sum(len(_expected(lake, t, d, "oms-canal")[0]) for _, t, d in DAYS if d == "2024-01-01")
    assert by_day["2024-01-01"]["written"] == written
    assert by_day["2024-01-03"] == {"events": 0, "written": 0, "skipped": 0}
    assert encode_days(session, tmp_path, "oms-canal", ["orders"], days, local_conf={})["2024-01-01"]["events"] == 0


def _files(target: Path) -> list[str]:
    """The partition folders holding a file, as paths under `target`."""
    folders = {p.parent.relative_to(target) for p in target.glob("dt=*/source_topic=*/part-*")}
    return sorted(str(f) for f in folders)


@pytest.mark.parametrize("target", ["oms-canal", "dts-avro", "datahub-tuple"])
def test_the_same_files_as_sparks_encode(spark, lake, tmp_path, target):
    """Text, Avro containers (two messages for some events) and a target that skips events (one partition
    left without a message): the same partitions, messages, counts and skipped rows."""
    events = read_canonical(spark, str(lake.root / "changes"))
    by_spark = write_encoded_by_day(encode_events(events, target), str(tmp_path / "spark"), target)

    by_python = encode_in_process(str(lake.root / "changes"), str(tmp_path / "python"), target)

    assert by_python == by_spark
    assert _files(tmp_path / "python") == _files(tmp_path / "spark")
    for _, topic, day in DAYS:
        folder = Path(f"dt={day}") / f"source_topic={topic}"
        assert _written(tmp_path / "python" / folder) == _written(tmp_path / "spark" / folder), (topic, day)
    spark_reasons = {r["event_id"]: r["skip_reason"] for r in _skipped_rows(tmp_path / "spark")}
    assert {r["event_id"]: r["skip_reason"] for r in _skipped_rows(tmp_path / "python")} == spark_reasons
    assert _skipped(tmp_path / "python") == _skipped(tmp_path / "spark")


def _skipped_rows(target: Path) -> list[dict]:
    path = target / "_skipped"
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist() if (path / "_delta_log").exists() else []


@pytest.mark.parametrize("target", ["oms-default", "dts-avro"])
def test_a_lake_spark_wrote_encodes_as_spark_encodes_it(spark, tmp_path, target):
    """Spark's Parquet (its timestamps, maps and lists as Spark writes them) read by delta-rs: the same
    partitions, messages and counts as Spark's own encode of that lake."""
    from cdc_pipelines.decode.runner import decode_files, write_decoded

    lake = tmp_path / "lake"
    for format_id, topic, day in DAYS[:3]:
        write_decoded(decode_files(spark, format_id, [resource(format_id, "seed.jsonl")], topic=topic, dt=day), lake)
    events = read_canonical(spark, str(lake / "changes"))
    assert DeltaTable(str(lake / "changes")).history()[0]["operation"] != "CREATE TABLE"  # Spark committed it
    by_spark = write_encoded_by_day(encode_events(events, target), str(tmp_path / "spark"), target)

    by_python = encode_in_process(str(lake / "changes"), str(tmp_path / "python"), target)

    assert by_python == by_spark
    assert _files(tmp_path / "python") == _files(tmp_path / "spark")
    for _, topic, day in DAYS[:3]:
        folder = Path(f"dt={day}") / f"source_topic={topic}"
        assert _written(tmp_path / "python" / folder) == _written(tmp_path / "spark" / folder), (topic, day)
