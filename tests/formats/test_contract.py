"""The codec contract: options declared once beside each codec and checked before a run; the raw event's fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cdc_pipelines.cli.commands import main
from cdc_pipelines.decode.messages import EMPTY_EVENT
from cdc_pipelines.formats import FORMAT_IDS, OptionError, get_codec
from cdc_pipelines.formats.base import Option, RawEvent

FORMATS_PAGE = Path(__file__).parents[2] / "docs" / "formats" / "index.md"


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_every_option_is_declared_with_a_meaning_and_its_default_passes_its_check(format_id):
    codec = get_codec(format_id)
    names = [option.name for option in codec.options]
    assert len(names) == len(set(names))
    assert all(isinstance(option, Option) and option.description for option in codec.options)
    assert codec.resolve_options({}) == codec.defaults


@pytest.mark.parametrize(
    ("format_id", "given", "says"),
    [
        ("oms-canal", {"colour": "red"}, "format oms-canal has no option colour (options: binary, legacy, timezone)"),
        ("oms-canal", {"legacy": "yes"}, "option legacy='yes' of oms-canal must be one of false, true"),
        ("dts-canal", {"timezone": "Mars/Olympus"}, "timezone 'Mars/Olympus' is neither an IANA zone"),
        ("oms-debezium", {"schema": "maybe"}, "option schema='maybe' of oms-debezium must be one of auto, true, false"),
        ("oms-debezium", {"column_types": "c1:DAY"}, "column_types entry 'c1:DAY' is not NAME:TYPE"),
        ("oms-debezium-smt", {"add_fields": "op,colour"}, "add_fields colour not one of"),
        ("dataworks-json", {"merged": "both"}, "option merged='both' of dataworks-json must be one of"),
        ("maxwell-json", {"timezone": "UTC"}, "format maxwell-json has no option timezone (options: none)"),
    ],
)
def test_a_value_the_codec_cannot_take_is_refused_before_any_message(format_id, given, says):
    with pytest.raises(OptionError, match=re.escape(says)):
        get_codec(format_id).resolve_options(given)


def test_the_docs_formats_table_names_every_option():
    formats = FORMATS_PAGE.read_text().split("\n## Format ids and options\n", 1)[1].split("\n## ", 1)[0]
    rows = {m[1]: m[2] for m in re.finditer(r"^\| `([a-z0-9-]+)` \|[^|]*\|(.*)\|$", formats, re.M)}
    for format_id in FORMAT_IDS:
        listed = rows[format_id]
        if listed.strip().startswith("as `"):
            listed = rows[listed.strip()[4:-1]]
        assert set(re.findall(r"`([a-z_][a-z_.-]*)=", listed)) == set(get_codec(format_id).defaults), format_id


def test_formats_lists_options_under_each_id_when_asked(capsys):
    assert main(["formats", "--options"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if not line.startswith(" ")] == list(FORMAT_IDS)
    canal = lines.index("oms-canal")
    assert lines[canal + 1].startswith("  legacy=false (false|true)  true for DTS instances")
    assert lines[canal + 3].startswith("  timezone=UTC  zone of TIMESTAMP text")


def test_the_raw_event_names_every_field_a_finished_event_has():
    assert set(RawEvent.__annotations__) == set(EMPTY_EVENT) | {"temporal_units"}
