"""Every `cdc-pipelines` command takes relative paths, resolved against the working directory it runs in
(Spark's JVM and Great Expectations would otherwise resolve them elsewhere, or refuse them)."""

from __future__ import annotations

import json
import shutil

from cdc_pipelines.cli.commands import main
from cdc_pipelines.quality.gx_static import available
from tests.conftest import resource


def _last(capsys) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


def test_every_command_with_relative_paths_from_another_directory(spark, tmp_path, monkeypatch, capsys):
    work = tmp_path / "elsewhere"
    (work / "in").mkdir(parents=True)
    shutil.copy(resource("oms-canal", "seed.jsonl"), work / "in" / "orders.jsonl")
    monkeypatch.chdir(work)

    assert main(["detect", "in/orders.jsonl"]) == 0 and _last(capsys) == "oms-canal"
    decode = ["decode", "--format", "oms-canal", "--out", "lake", "--topic", "orders", "--dt", "2024-03-01", "in"]
    assert main(decode) == 0 and json.loads(_last(capsys))["events"] == 4
    assert list((work / "lake" / "changes" / "dt=2024-03-01").glob("source_topic=orders/*.parquet"))

    convert = ["convert", "--from", "oms-canal", "--to", "oms-default", "--out", "conv", "--dt", "2024-03-01", "in"]
    assert main(convert) == 0 and json.loads(_last(capsys))["written"] == 4
    assert list((work / "conv" / "oms-default" / "dt=2024-03-01").glob("source_topic=*/part-*"))

    assert main(["encode", "--to", "dataworks-json", "--out", "enc", "lake/changes"]) == 0
    encoded = json.loads(_last(capsys))
    assert encoded["events"] == 4 and encoded["skipped"] == 0  # the update goes out as two messages
    assert list((work / "enc" / "dataworks-json" / "dt=2024-03-01").glob("source_topic=orders/part-*"))

    assert main(["sample", "--out", "samples", "--dt", "2024-03-02"]) == 0
    assert json.loads(_last(capsys))["events"] > 0 and (work / "samples" / "changes" / "dt=2024-03-02").is_dir()

    # with the GX suite: the relative report folder used to crash inside Great Expectations
    assert main(["quality", "--canonical", "lake", "--dt", "2024-03-01", "--out", "reports"]) == 0
    assert json.loads(_last(capsys))["image_presence_check"] is True
    day = work / "reports" / "dt=2024-03-01"
    assert (day / "index.html").is_file() and (day / "gx" / "index.html").is_file()
    gx = json.loads((day / "summary.json").read_text())["great_expectations"]
    assert gx["data_docs"] == "gx/index.html"
    assert gx["data_docs_offline"] is available()  # local copies of the CDN files, where scripts/setup put them
    if gx["data_docs_offline"]:
        assert "code.jquery.com" not in (day / "gx" / "index.html").read_text()
    assert not (tmp_path / "lake").exists() and not list(tmp_path.glob("*/gx"))  # nothing landed beside
