"""The engine table: what `auto` takes for each case, what an explicit engine may and may not serve."""

from __future__ import annotations

import pytest

from cdc_pipelines.engines.choice import AUTO, LOCAL, QUALITY, SETTING, SPARK, EngineError, Run, asked, choose
from cdc_pipelines.runtime.session import MASTER_ENV


def _run(lake: str = "/tmp/lake", out: str | None = None, conf=None, command_conf=None) -> Run:
    return Run(QUALITY, lake, out, conf or {}, command_conf or {})


@pytest.mark.parametrize(
    ("run", "engine"),
    [
        (_run(), LOCAL),
        (_run(conf={"spark.master": "local[2]"}), LOCAL),  # a local master is this machine
        (_run(conf={"spark.master": "spark://127.0.0.1:7077"}), SPARK),
        (_run(command_conf={"spark.sql.shuffle.partitions": "4"}), SPARK),
        (_run(conf={"spark.sql.shuffle.partitions": "4"}), LOCAL),  # the process's settings, not the command's
        (_run(lake="s3a://bucket/lake"), SPARK),
        (_run(out="hdfs://nn/reports"), SPARK),
    ],
)
def test_auto_takes_the_first_row_that_holds(run, engine, monkeypatch):
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert choose(run, AUTO) == engine


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "local[2]"])
def test_a_master_named_in_the_environment_prefers_spark(master, monkeypatch):
    monkeypatch.setenv(MASTER_ENV, master)
    assert choose(_run()) == SPARK
    assert choose(_run(), LOCAL) == LOCAL  # a preference: the local engine may still be asked for


def test_an_engine_asked_for_serves_what_it_can_and_says_why_it_cannot(monkeypatch):
    monkeypatch.delenv(MASTER_ENV, raising=False)
    assert choose(_run(), SPARK) == SPARK  # Spark serves every case
    assert choose(_run(command_conf={"spark.x": "1"}), LOCAL) == LOCAL
    with pytest.raises(EngineError, match="--engine local cannot run quality here: the lake or the output folder is "
                                          "not on local disk"):  # fmt: skip
        choose(_run(lake="oss://bucket/lake"), LOCAL)


def test_a_table_delta_rs_cannot_open_needs_spark(tmp_path, monkeypatch):
    """A folder name delta-rs would take for a URL (`%`, as Spark escapes partition values)."""
    monkeypatch.delenv(MASTER_ENV, raising=False)
    lake = tmp_path / "a%20lake"
    assert choose(_run(lake=str(lake))) == SPARK
    with pytest.raises(EngineError, match="a table of the lake is one delta-rs cannot read"):
        choose(_run(lake=str(lake)), LOCAL)


def test_the_engine_asked_for_by_flag_then_setting():
    assert asked({}) == AUTO
    assert asked({SETTING: "spark"}) == SPARK
    assert asked({SETTING: "spark"}, "local") == LOCAL
    with pytest.raises(EngineError, match="takes local, spark or auto, not 'jvm'"):
        asked({SETTING: "jvm"})


def test_a_kafka_day_is_the_local_engines_unless_its_settings_are_javas(monkeypatch):
    """The native client reads a Kafka day of a local lake; a login librdkafka cannot take, or a lake elsewhere,
    leaves it to Spark's Kafka source (and `--engine local` says why)."""
    from cdc_pipelines.engines.choice import DECODE
    from cdc_pipelines.extract.kafka_source import kafka_source

    monkeypatch.delenv(MASTER_ENV, raising=False)
    plain = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'
    kerberos = "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"

    def run(lake: str = "/tmp/lake", **options) -> Run:
        return Run(DECODE, lake, None, {}, kafka=kafka_source("127.0.0.1:9092", "orders", options))

    assert choose(run()) == choose(run(**{"sasl.jaas.config": plain})) == LOCAL
    assert choose(run(), SPARK) == SPARK
    assert choose(run(lake="s3a://bucket/lake")) == choose(run(**{"sasl.jaas.config": kerberos})) == SPARK
    with pytest.raises(EngineError, match="a day read from Kafka with a setting the native Kafka client"):
        choose(run(**{"sasl.jaas.config": kerberos}), LOCAL)


def test_a_snapshot_day_goes_to_spark_past_the_local_engines_size_or_where_delta_rs_cannot_write(tmp_path):
    """A local lake's snapshot day is the local engine's; a day past `cdc.snapshots.local_max_events` goes to
    Spark under auto (local may still be asked for); a table Spark created is Spark's only."""
    import pyarrow as pa
    from deltalake import DeltaTable

    from cdc_pipelines.engines.choice import SNAPSHOTS
    from cdc_pipelines.snapshots.store import table_paths
    from tests.snapshots.events import insert
    from tests.snapshots.lakes import SnapshotEngine

    day = "2024-01-01"
    lake = SnapshotEngine("local", None).lake(tmp_path, [insert(1, {"id": "1"}), insert(2, {"id": "2"})])
    run = Run(SNAPSHOTS, str(lake), None, {}, dts=(day,))
    assert choose(run) == LOCAL
    small = Run(SNAPSHOTS, str(lake), None, {"cdc.snapshots.local_max_events": "1"}, dts=(day,))
    assert choose(small) == SPARK and choose(small, LOCAL) == LOCAL
    current = table_paths(str(lake / "snapshots"), ("db", None, "t")).current
    # a table with deletion vectors, as Spark creates it
    DeltaTable.create(current, pa.schema([("id", pa.string())]), configuration={"delta.enableDeletionVectors": "true"})
    with pytest.raises(EngineError, match="Spark created it"):
        choose(run, LOCAL)
    assert choose(run) == SPARK
