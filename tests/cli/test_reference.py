"""The docs' generated reference pages: checked in, and equal to what the code renders (scripts/docs)."""

from __future__ import annotations

from pathlib import Path

import assets.cli
from cdc_pipelines.cli import reference
from cdc_pipelines.cli.commands import COMMANDS

DOCS = Path(__file__).parents[2] / "docs"


def test_the_checked_in_reference_pages_are_what_the_code_renders():
    for name, text in reference.pages(reference.program_commands(assets.cli)).items():
        assert (DOCS / name).read_text(encoding="utf-8") == text, f"docs/{name} is out of date: run scripts/docs"


def test_every_command_and_its_every_option_has_an_entry():
    page = reference.cli_page(reference.program_commands(assets.cli))
    for command in (*COMMANDS, assets.cli.DEMO, assets.cli.BENCH_DAILY):
        assert f"\n## {command.name}\n" in page
    for option in ("`--include GLOB`", "`--kafka BOOTSTRAP`", "`--keys-from-kafka`", "`--as-of AS_OF`", "`--no-gx`"):
        assert option in page


def test_every_setting_is_listed_with_its_module_and_default():
    rows = {item.key: item for item in reference.declared()}
    assert rows["cdc.decode.in_process_max_bytes"].module == "cdc_pipelines/decode/pool.py"
    assert rows["cdc.decode.in_process_max_bytes"].default == f"{8 << 20:,}"
    assert rows["cdc.jvm.quick_start"].default == "`true`"
    assert rows["CDC_SPARK_MASTER"].default == "`local[*]`"
    for key in ("cdc.snapshots.small_table_max_rows", "cdc.encode.processes", "spark.cdc.catalog.database"):
        assert rows[key].meaning
