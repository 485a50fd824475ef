"""The `cdc.*` meta keys: one table names them all, and the decoders write no other."""

from __future__ import annotations

from cdc_pipelines.formats import SELF_CONTAINED
from cdc_pipelines.model import meta_keys
from cdc_pipelines.samples import sample_folder
from tests.decode.oracles import decode_paths


def test_every_key_has_one_name_and_a_meaning():
    assert len(set(meta_keys.MEANINGS)) == len(meta_keys.MEANINGS)
    assert all(key.startswith(meta_keys.PREFIX) and meaning for key, meaning in meta_keys.MEANINGS.items())


def test_the_samples_decode_to_no_cdc_key_outside_the_table():
    options = {"oms-debezium-smt": {"table": "t"}, "datahub-tuple": {"table": "t"}}
    written = set()
    for format_id in SELF_CONTAINED:
        decoded = decode_paths(format_id, [sample_folder(format_id)], topic=format_id, options=options.get(format_id))
        written |= {k for e in decoded.events for k in e["meta"] or () if k.startswith(meta_keys.PREFIX)}
    assert written - set(meta_keys.MEANINGS) == set()
    assert {meta_keys.JSON_NUMBERS, meta_keys.ROW_INDEX, meta_keys.CHANGED_COLUMNS, meta_keys.BEFORE_RAW_OP} <= written
