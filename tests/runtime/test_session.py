"""The session's settings, the package it ships to a cluster, and where a local session reads its jars."""

import subprocess
import zipfile
from pathlib import Path

import pytest

from cdc_pipelines.runtime.session import (
    C1_ONLY,
    DEFAULT_SPLIT_BYTES,
    QUICK_START,
    SPARK_CONF_ENV,
    SPLIT_SETTING,
    _resolution_record,
    _with_packages,
    balanced_splits,
    class_archive,
    driver_java_options,
    full_jit,
    jars_resolved,
    local_cores,
    package_zip,
    session_conf,
    with_fetched_jars,
)


def test_the_shipped_zip_holds_the_whole_package():
    names = zipfile.ZipFile(package_zip()).namelist()
    assert "cdc_pipelines/__init__.py" in names
    assert {"cdc_pipelines/decode/runner.py", "cdc_pipelines/runtime/session.py"} <= set(names)
    assert not any("__pycache__" in n for n in names)


def test_a_local_driver_starts_with_c1_only_and_a_cluster_keeps_c2():
    assert "-XX:TieredStopAtLevel=1" in driver_java_options({"spark.master": "local[2]"})
    assert "-XX:TieredStopAtLevel=1" not in driver_java_options({"spark.master": "spark://127.0.0.1:7077"})
    quick = session_conf({"spark.master": "local[1]"})["spark.driver.extraJavaOptions"]
    plain = session_conf({"spark.master": "local[1]", "cdc.jvm.quick_start": "false"})["spark.driver.extraJavaOptions"]
    assert "TieredStopAtLevel" in quick and "TieredStopAtLevel" not in plain and "cdc.jvm" not in plain


def test_a_large_run_starts_with_both_compilers_unless_the_settings_say(monkeypatch, tmp_path):
    monkeypatch.delenv(SPARK_CONF_ENV, raising=False)
    monkeypatch.setenv("CDC_CACHE_DIR", str(tmp_path))
    assert full_jit({"a": "1"}, large=False) == {"a": "1"}
    assert full_jit({"a": "1"}) == {"a": "1", C1_ONLY: "false"}
    assert full_jit({QUICK_START: "true"}) == {QUICK_START: "true"}
    assert full_jit({C1_ONLY: "true"}) == {C1_ONLY: "true"}
    conf = {"spark.master": "local[1]", **full_jit({})}
    archive = class_archive(_with_packages(conf, None)[0])
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"")  # the class-data archive is kept with both compilers
    options = session_conf(conf)["spark.driver.extraJavaOptions"]
    assert "TieredStopAtLevel" not in options and f"-XX:SharedArchiveFile={archive}" in options
    monkeypatch.setenv(SPARK_CONF_ENV, '{"cdc.jvm.quick_start": "true"}')
    assert full_jit({}) == {}


def test_a_large_local_input_is_cut_into_a_whole_number_of_splits_per_core(monkeypatch):
    monkeypatch.delenv(SPARK_CONF_ENV, raising=False)
    monkeypatch.delenv("CDC_SPARK_MASTER", raising=False)
    mib = 1 << 20
    for cores in (1, 2, 3, 8):
        master = {"spark.master": f"local[{cores}]"}
        assert balanced_splits(master, cores * DEFAULT_SPLIT_BYTES) == master  # Spark splits by bytes per core
        for size in (cores * DEFAULT_SPLIT_BYTES + 1, 895 * mib, 1789 * mib + 7, 10_000 * mib + 3):
            if size <= cores * DEFAULT_SPLIT_BYTES:
                continue
            split = int(balanced_splits(master, size)[SPLIT_SETTING])
            splits = -(-size // split)  # the splits of one file this size
            assert split <= DEFAULT_SPLIT_BYTES and splits % cores == 0, (cores, size, split)
    assert balanced_splits({"spark.master": "local[2]"}, 895 * mib)[SPLIT_SETTING] == str(-(-895 * mib // 8))
    assert balanced_splits({"spark.master": "spark://h:7077"}, 895 * mib) == {"spark.master": "spark://h:7077"}
    assert balanced_splits({SPLIT_SETTING: "1000"}, 895 * mib) == {SPLIT_SETTING: "1000"}
    assert [local_cores(m) for m in ("local", "local[3]", "local[4,2]", "yarn")] == [1, 3, 4, None]


def _resolved_jar(conf: dict, ivy: Path) -> Path:
    """A jar in the Ivy folder `ivy`, listed as what an earlier start resolved for `conf`'s packages."""
    jar = ivy / "jars" / "delta-spark.jar"
    jar.parent.mkdir()
    jar.write_bytes(b"")
    listing = _resolution_record(_with_packages(conf, None)[0])
    listing.parent.mkdir()
    listing.write_text(f'["file:{jar}"]')
    return jar


def test_jars_count_as_resolved_only_while_every_listed_one_is_in_the_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(SPARK_CONF_ENV, raising=False)
    conf = {"spark.jars.ivy": str(tmp_path)}
    assert not jars_resolved(conf)
    jar = _resolved_jar(conf, tmp_path)
    assert jars_resolved(conf)
    jar.unlink()
    assert not jars_resolved(conf)


def test_unresolved_jars_are_fetched_once_with_one_line_on_the_terminal_and_ivys_words_in_a_log(
    monkeypatch, tmp_path, capfd
):
    """The child JVM stood in by a process that prints as Ivy does and records the jars as a start would."""
    monkeypatch.delenv(SPARK_CONF_ENV, raising=False)
    monkeypatch.setenv("CDC_LOG_DIR", str(tmp_path / "logs"))
    conf = session_conf({"spark.jars.ivy": str(tmp_path)}, master="local[2]")
    assert "spark.jars.packages" in conf  # never resolved: the JVM would print Ivy's listing

    def child(command, stdout, stderr):
        stdout.write(":: resolving dependencies ::\n")
        _resolved_jar(conf, tmp_path)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(subprocess, "run", child)
    started = with_fetched_jars(conf)
    assert "spark.jars.packages" not in started and str(tmp_path / "jars") in started["spark.driver.extraClassPath"]
    out, err = capfd.readouterr()
    log = tmp_path / "logs" / "jars.log"
    assert (out, err) == ("", f"fetching Spark's jars, once: 700 MB (log: {log})\n")
    assert log.read_text() == ":: resolving dependencies ::\n"
    assert with_fetched_jars(session_conf({"spark.jars.ivy": str(tmp_path)}, master="local[2]")) == started
    assert capfd.readouterr() == ("", "")  # once: the next start takes the recorded jars


def test_resolved_jars_go_on_a_local_drivers_class_path_and_to_a_clusters_executors(monkeypatch, tmp_path):
    monkeypatch.delenv(SPARK_CONF_ENV, raising=False)
    conf = {"spark.jars.ivy": str(tmp_path)}
    jar = _resolved_jar(conf, tmp_path)
    local = session_conf({**conf, "spark.driver.extraClassPath": "/opt/mine.jar"}, master="local[2]")
    assert local["spark.driver.extraClassPath"] == f"{jar}:/opt/mine.jar" and "spark.jars" not in local
    cluster = session_conf(conf, master="spark://127.0.0.1:7077")
    assert cluster["spark.jars"] == f"file:{jar}" and "spark.driver.extraClassPath" not in cluster
    assert "spark.jars.packages" not in local and "spark.jars.packages" not in cluster
    archives = {class_archive(_with_packages(conf, master)[0]) for master in ("local[2]", "spark://h:7077")}
    assert len(archives) == 2  # one class path each
    elsewhere = {**conf, "spark.jars.ivy": str(tmp_path / "other")}
    assert class_archive(_with_packages(elsewhere, "local[2]")[0]) not in archives  # the jars at other paths


def test_a_local_session_reads_its_jars_where_ivy_keeps_them(spark):
    conf = spark.sparkContext.getConf()
    if conf.contains("spark.jars.packages"):
        pytest.skip("this start resolved the packages (a machine without scripts/setup): they come as spark.jars")
    spark.range(1).count()  # an executor fetches what `spark.jars` lists before its first task
    files = Path(spark.sparkContext._jvm.org.apache.spark.SparkFiles.getRootDirectory())
    assert not list(files.glob("*.jar"))  # 686 MB a session when the jars were copied here
    assert "io.delta_delta-spark" in conf.get("spark.driver.extraClassPath")
