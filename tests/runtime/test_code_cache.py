"""A local driver on C1 alone keeps a code cache a long run does not fill (no Spark started)."""

from cdc_pipelines.runtime.session import driver_java_options, session_conf


def test_a_c1_driver_gets_a_tiered_jvms_code_cache_and_a_cluster_keeps_the_jvms_own():
    local = driver_java_options({"spark.master": "local[2]"})
    assert "-XX:ReservedCodeCacheSize=256m" in local
    assert local.index("-XX:TieredStopAtLevel=1") < local.index("-XX:ReservedCodeCacheSize=256m")
    assert not any("CodeCache" in o for o in driver_java_options({"spark.master": "spark://127.0.0.1:7077"}))
    plain = session_conf({"spark.master": "local[1]", "cdc.jvm.quick_start": "false"})["spark.driver.extraJavaOptions"]
    assert "ReservedCodeCacheSize" not in plain
