"""Format detection names the right format for a sample of every format, and refuses to guess."""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.cli.commands import main
from cdc_pipelines.extract.detect import detect_format
from cdc_pipelines.formats import SELF_CONTAINED
from cdc_pipelines.samples import sample_folder
from tests.conftest import resource


@pytest.mark.parametrize("format_id", [f for f in SELF_CONTAINED if sample_folder(f) is not None])
def test_every_sample_is_recognised(format_id):
    assert detect_format([sample_folder(format_id)]) == format_id


def test_every_format_has_a_sample_or_a_fixture():
    assert {f for f in SELF_CONTAINED if sample_folder(f) is None} == set()


def test_avro_container_and_value_b64_lines(tmp_path):
    (tmp_path / "a.avro").write_bytes(b"Obj\x01rest")
    assert detect_format([tmp_path / "a.avro"]) == "dts-avro"
    (tmp_path / "b.jsonl").write_text(json.dumps({"offset": 1, "value_b64": "AA=="}) + "\n")
    assert detect_format([tmp_path / "b.jsonl"]) == "dts-avro"


def test_real_files(tmp_path):
    assert detect_format([resource("peer", "paimon-aliyun", "event-insert.txt")]) == "dataworks-json"


def test_unknown_and_mixed_inputs_give_no_answer(tmp_path, capsys):
    (tmp_path / "x.jsonl").write_text('{"a": 1}\nnot json\n')
    assert detect_format([tmp_path / "x.jsonl"]) is None
    assert main(["detect", str(tmp_path / "x.jsonl")]) == 2
    assert "cannot tell the format" in capsys.readouterr().err
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for fmt in ("oms-canal", "oms-shareplex"):
        (mixed / f"{fmt}.jsonl").write_text((sample_folder(fmt) / "seed.jsonl").read_text())
    assert detect_format([mixed]) is None


def test_decode_with_auto_format(spark, tmp_path, capsys):
    code = main(["decode", "--format", "auto", "--out", str(tmp_path / "out"), str(sample_folder("oms-shareplex"))])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary == {"read": 4, "decoded": 4, "rejected": 0, "filtered": 0, "events": 4}
