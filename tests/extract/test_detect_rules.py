"""Each codec's own `recognise` names its own samples, and detection tries every one in one declared order."""

from __future__ import annotations

import json

import pytest

from cdc_pipelines.extract.detect import message_format
from cdc_pipelines.formats import DETECTION_ORDER, FORMAT_IDS, get_codec
from cdc_pipelines.samples import sample_folder

JSON_SAMPLED = [f for f in FORMAT_IDS if sample_folder(f) is not None and any(sample_folder(f).glob("*.jsonl"))]


@pytest.mark.parametrize("format_id", JSON_SAMPLED)
def test_own_sample_is_recognised(format_id):
    for path in sorted(sample_folder(format_id).glob("*.jsonl")):
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        assert message_format(first) == format_id, path.name


def test_every_recognising_codec_is_ordered_once():
    recognising = {f for f in FORMAT_IDS if get_codec(f).recognise is not None}
    assert len(DETECTION_ORDER) == len(set(DETECTION_ORDER))
    assert set(DETECTION_ORDER) == recognising


def test_non_objects_are_no_format():
    for message in (None, [], [{"value_b64": "AA=="}], "value_b64", 1):
        assert message_format(message) is None
