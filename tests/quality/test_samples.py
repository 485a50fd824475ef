"""The built-in spec samples, decoded, pass every rule except where the seed itself is inconsistent."""

from __future__ import annotations

import pytest

from cdc_pipelines.decode.pool import decode_with_processes
from cdc_pipelines.extract.files import list_input_files
from cdc_pipelines.formats import SELF_CONTAINED
from cdc_pipelines.lake import delta_rs
from cdc_pipelines.samples import sample_folder
from tests.formats.fake_registry import FakeRegistry
from tests.formats.test_debezium_avro import FORMAT as AVRO
from tests.formats.test_debezium_avro import avro_message, avro_row, envelope_schema, line
from tests.quality.rows import DT, THRESHOLDS


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """Every sample decoded into a lake (one topic per format, counts recorded), as a small local extract
    is by `decode` (`pool.decode_with_processes`; the Spark decode writes the same tables:
    tests/lake/test_delta_rs.py), and Debezium Avro's ops (an UPDATE with its after image only) read
    through a registry."""
    lake = tmp_path_factory.mktemp("lake")
    for format_id in SELF_CONTAINED:
        files = list_input_files([str(sample_folder(format_id))])
        decode_with_processes(format_id, files, topic=format_id, dt=DT, out=lake)
    registry, avro = FakeRegistry(), tmp_path_factory.mktemp("avro") / "changes.json"
    schema_id = registry.add(envelope_schema())
    ops = [("c", None, avro_row()), ("u", None, avro_row(name="new")), ("d", avro_row(), None)]
    avro.write_bytes(b"".join(line(avro_message(schema_id, *op)) + b"\n" for op in ops))
    decode_with_processes(AVRO, [str(avro)], topic=AVRO, dt=DT, out=lake, options={"url": registry.url})
    registry.stop()
    return str(lake)


@pytest.fixture
def judged_samples(engine, samples):
    return engine.day_quality(samples, DT, THRESHOLDS, {}, None)


def test_samples_pass_images_timestamps_and_conservation(judged_samples, samples):
    results, counts = judged_samples.results, judged_samples.event_counts
    by_rule = {r.rule: r for r in results}
    assert {r.rule for r in results if r.passed} == {
        "image_presence_check",
        "timestamp_precision_check",
        "conservation_check",
    }
    assert by_rule["conservation_check"].info["balance_checked"]
    assert by_rule["conservation_check"].info["reject_reasons"] == [
        {"reason": "canal DELETE message without rows", "count": 1}
    ]
    assert by_rule["timestamp_precision_check"].checks["temporal_values"]["checked"] > 0
    assert sum(sum(c["ops"].values()) for c in counts) == delta_rs.partition_counts(f"{samples}/changes", "dt")[DT]


def test_samples_fail_pk_only_where_the_seed_names_pk_columns_its_images_lack(judged_samples):
    result = next(r for r in judged_samples.results if r.rule == "pk_consistency_check")
    failing = {(g["source_topic"], g["table"]): g["failed"] for g in result.groups if g["failed"]}
    # oms-canal's DELETE seed names pkNames int8/int16; OMS default seeds name id1/id2 while the images
    # hold col1/col2 (the \u0001 values 3/129 are theirs); oms-dataworks names pkName1/pkName12 likewise
    assert failing == {
        ("oms-canal", "database.table"): 1,
        ("oms-dataworks", "db.tab"): 3,
        ("oms-default", "tenant.database.table_name"): 3,
        ("oms-default-extend", "database.table"): 3,
    }
    assert result.checks["pk_values"]["failed"] == result.failed == 10
    canal = [e["reason"] for e in result.examples if e["source_topic"] == "oms-canal"]
    assert canal == ["PK value before int8 missing, before int16 missing"]
    assert result.info["tables_without_pk"] == ["dataworks-json/pkset_test.pkset_test_no_pk"]
