"""A catalog's days decoded as the daily asset does: each local day without Spark where `decode` would,
each topic with a table filter by Spark, the same lake and counts as Spark's decode of every day; a local
raw folder counted without a session."""

import gzip
import shutil
from pathlib import Path

import pytest
from deltalake import DeltaTable

from cdc_pipelines.decode.days import decode_days, extract_stats
from cdc_pipelines.decode.pool import MAX_BYTES_SETTING, PROCESSES_SETTING
from cdc_pipelines.demo.extracts import wrap_kcat
from cdc_pipelines.extract.catalog import load_catalog
from tests.conftest import resource

DAYS = ("2024-01-02", "2024-01-03")
CATALOG = """topics:
  - {name: orders, format: oms-canal}
  - {name: users, format: oms-default, envelope: kcat}
  - {name: shop, format: oms-canal, tables: {include: ["shop.*"]}}
  - {name: quiet, format: oms-shareplex}
"""


def _raw(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    for day in DAYS:
        for topic in ("orders", "shop"):
            (raw / topic / f"dt={day}").mkdir(parents=True)
            shutil.copy(resource("oms-canal", "seed.jsonl"), raw / topic / f"dt={day}" / "part-0.jsonl")
    wrap_kcat(resource("oms-default", "seed.jsonl"), raw / "users" / f"dt={DAYS[0]}" / "part-0.jsonl", "users")
    (raw / "users" / f"dt={DAYS[1]}").mkdir(parents=True)
    (raw / "users" / f"dt={DAYS[1]}" / "part-0.jsonl").write_text("not an envelope\n")
    (raw / "quiet" / f"dt={DAYS[0]}").mkdir(parents=True)
    (raw / "quiet" / f"dt={DAYS[0]}" / ".hidden").write_text("x\n")
    (tmp_path / "catalog.yaml").write_text(CATALOG)
    return raw


def _rows(path: Path, but: str = "\0") -> list[tuple]:
    """The table's rows as text, but those of files whose name holds `but`."""
    rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    return sorted(tuple(str(v) for v in row.values()) for row in rows if but not in row["source_file"])


def _counts(lake: Path) -> dict[tuple, dict]:
    rows = DeltaTable(str(lake / "counts")).to_pyarrow_table().to_pylist()
    return {(r.pop("dt"), r.pop("source_topic")): r for r in rows}


def test_local_days_without_spark_equal_sparks_decode(spark, tmp_path):
    """In this process (the filtered topic too), then by the pool (in-process limit 0, one process), where the
    second day of `orders` is gzipped and read whole: no day needs Spark, and every table equals Spark's
    decode (the gzipped day's rows but their file names, `.jsonl.gz` against `.jsonl`)."""
    raw = _raw(tmp_path)
    topics = load_catalog(tmp_path / "catalog.yaml")
    sessions = []

    def folder(topic, dt):
        return raw / topic / f"dt={dt}"

    def session():
        sessions.append(1)
        return spark

    by_spark, none = decode_days(lambda: spark, topics, folder, tmp_path / "spark", DAYS)
    assert none == set()
    assert by_spark[DAYS[1]]["users"] == {"read": 1, "decoded": 0, "rejected": 1, "filtered": 0, "events": 0}
    assert by_spark[DAYS[0]]["shop"]["filtered"] > 0 and by_spark[DAYS[0]]["quiet"]["read"] == 0
    local, committed = decode_days(session, topics, folder, tmp_path / "local", DAYS, local_conf={})
    every = {(day, topic) for day in DAYS for topic in ("orders", "users", "shop")}
    assert committed == every
    assert not sessions  # no day needed Spark
    assert local == by_spark
    assert _counts(tmp_path / "local") == {key: local[key[0]][key[1]] for key in committed}
    for table in ("changes", "rejects"):
        assert _rows(tmp_path / "local" / table) == _rows(tmp_path / "spark" / table)

    gzipped = raw / "orders" / f"dt={DAYS[1]}" / "part-0.jsonl"
    with gzip.open(f"{gzipped}.gz", "wb") as out:
        out.write(gzipped.read_bytes())
    gzipped.unlink()
    pool_conf = {MAX_BYTES_SETTING: "0", PROCESSES_SETTING: "1"}
    pooled, committed = decode_days(session, topics, folder, tmp_path / "pool", DAYS, local_conf=pool_conf)
    assert committed == every
    assert not sessions  # the filtered topic and the gzipped day too
    assert pooled == by_spark
    assert _counts(tmp_path / "pool") == {key: pooled[key[0]][key[1]] for key in committed}
    assert pooled[DAYS[1]]["orders"]["events"] > 0
    for table in ("changes", "rejects"):
        assert _rows(tmp_path / "pool" / table, ".gz") == _rows(tmp_path / "spark" / table, f"orders/dt={DAYS[1]}/")
        gz = _texts(tmp_path / "pool" / table, ".gz")
        assert gz == _texts(tmp_path / "spark" / table, f"orders/dt={DAYS[1]}/")
        assert gz or table == "rejects"


def _texts(path: Path, holding: str) -> list[str]:
    """The rows of files whose name holds `holding`, each as one text but its file and event id (made of it)."""
    rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    left_out = ("source_file", "event_id")
    return sorted(repr([str(v) for k, v in row.items() if k not in left_out]) for row in rows
                  if holding in row["source_file"])  # fmt: skip


def test_a_local_raw_folder_is_counted_without_a_session(tmp_path):
    raw = _raw(tmp_path)

    def no_session():
        pytest.fail("a local folder needs no Spark session")

    seed = resource("oms-canal", "seed.jsonl").stat().st_size
    assert extract_stats(no_session, raw / "orders" / f"dt={DAYS[0]}") == {"files": 1, "bytes": seed}
    assert extract_stats(no_session, raw / "quiet" / f"dt={DAYS[0]}") == {"files": 0, "bytes": 0}
    assert extract_stats(no_session, raw / "quiet" / f"dt={DAYS[1]}") == {"files": 0, "bytes": 0}
