"""decode(encode_T(x)) == what T carries of x, for every pair of the self-contained formats (`SELF_CONTAINED`),
and from each of them into `debezium-avro-confluent` through an in-process schema registry (it has no seed
sample, its messages needing a registry: its own tests hold it to `oms-debezium`'s rows).

Events are encoded into every target with the codecs' own encoders (the functions `convert` runs in
`mapInArrow`), each target's messages are decoded again in process (the codecs and the pairing the
Spark runner runs), and every event is compared with what `carry.py` says its target carries.
"""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from cdc_pipelines.formats import SELF_CONTAINED, get_codec
from cdc_pipelines.formats.encoding import Unsupported
from cdc_pipelines.samples import sample_folder
from tests.decode.oracles import decode_paths
from tests.formats import carry
from tests.formats.canonical_strategies import change_streams
from tests.formats.fake_registry import FakeRegistry

AVRO = "debezium-avro-confluent"
WITH_AVRO = (*SELF_CONTAINED, AVRO)


@pytest.fixture(scope="module")
def registry_options():
    """{target: options}: Debezium Avro's registry, in this process."""
    registry = FakeRegistry()
    yield {AVRO: {"url": registry.url}}
    registry.stop()


def convert_everywhere(events: list[dict], out: Path, targets=SELF_CONTAINED, options_of=None):
    """Encode `events` into every target and decode them back (`options_of`: target -> its options).

    Returns ({(target, i): [decoded events of event i]}, {(target, i): skip reason}, rejects).
    """
    origin, skipped, again, rejects = {}, {}, defaultdict(list), []
    for target in targets:
        codec = get_codec(target)
        options = codec.resolve_options((options_of or {}).get(target, {}))
        lines = []
        for i, event in enumerate(events):
            try:
                messages = codec.encode_event(event, options)
            except Unsupported as exc:
                skipped[(target, i)] = str(exc)
                continue
            for message in messages:
                binary = isinstance(message, bytes)
                lines.append(json.dumps({"value_b64": base64.b64encode(message).decode()}) if binary else message)
                origin[(target, len(lines))] = i
        (out / target).mkdir(parents=True)
        (out / target / "messages.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        decoded = decode_paths(target, [out / target], topic=target, dt="2024-01-01", options=options)
        found = set()
        for row in decoded.events:
            index = origin[(target, row["source_line"])]
            again[(target, index)].append(row)
            found.add(index)
        if len(found) < sum((target, i) not in skipped for i in range(len(events))):
            rejects += decoded.rejects
    return again, skipped, rejects


def carry_failures(events: list[dict], again, skipped, rejects, targets=SELF_CONTAINED) -> list[str]:
    """Every way the re-decoded events differ from what their targets carry, as readable lines."""
    failures = [f"{r['source_topic']} rejected line {r['source_line']}: {r['reason']}" for r in rejects]
    for target in targets:
        for i, event in enumerate(events):
            where = f"{event['source_topic']} -> {target} {event['op']} #{i}"
            if ((target, i) in skipped) != carry.expected_skip(target, event):
                failures.append(f"{where}: skipped={skipped.get((target, i))!r}, expected otherwise")
            elif (target, i) not in skipped:
                got = again.get((target, i), [])
                if len(got) != 1:
                    failures.append(f"{where}: decoded into {len(got)} events")
                else:
                    failures += [f"{where}: {p}" for p in carry.differences(target, event, got[0])]
    return failures


# formats that name no table (a topic per table) take it from the topic catalog's options
SOURCE_OPTIONS = {"oms-debezium-smt": {"db": "shop", "table": "orders"}, "datahub-tuple": {"db": "shop", "table": "t"}}


def test_every_seed_example_converts_to_every_format(tmp_path, registry_options):
    seeds = [
        event
        for f in SELF_CONTAINED
        for event in decode_paths(f, [sample_folder(f)], topic=f, dt="2024-01-01", options=SOURCE_OPTIONS.get(f)).events
    ]
    assert {e["source_topic"] for e in seeds} == set(SELF_CONTAINED)
    again, skipped, rejects = convert_everywhere(seeds, tmp_path, WITH_AVRO, registry_options)
    assert carry_failures(seeds, again, skipped, rejects, WITH_AVRO) == []
    # every pair converts something, but the TUPLE seed's rows (metadata columns only) for DebeziumSmt,
    # which has nothing to write for a row without columns
    empty = {
        (source, target)
        for source in SELF_CONTAINED
        for target in SELF_CONTAINED
        if all((target, i) in skipped for i, e in enumerate(seeds) if e["source_topic"] == source)
    }
    assert empty == {("datahub-tuple", "oms-debezium-smt")}


@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stream=change_streams(min_size=30, max_size=50))
def test_generated_events_convert_between_every_pair(tmp_path_factory, registry_options, stream):
    # stage 1: x -> every source format S and back; stage 2: each decoded x_S -> every target T and back
    again, skipped, rejects = convert_everywhere(
        stream, tmp_path_factory.mktemp("sources"), WITH_AVRO, registry_options
    )
    assert carry_failures(stream, again, skipped, rejects, WITH_AVRO) == []
    via_sources = [again[(s, i)][0] for s in WITH_AVRO for i in range(len(stream)) if (s, i) not in skipped]
    targets = tmp_path_factory.mktemp("targets")
    again, skipped, rejects = convert_everywhere(via_sources, targets, WITH_AVRO, registry_options)
    assert carry_failures(via_sources, again, skipped, rejects, WITH_AVRO) == []


def test_an_untyped_number_column_with_an_integer_and_a_fraction(tmp_path):
    # found by the generated events through maxwell-json (no types) into dts-avro: a DECIMAL column's
    # `3752.0` before and `0` after, untyped, must stay one Decimal column in the Avro record
    event = {
        "event_id": "e1", "source_format": "maxwell-json", "source_topic": "maxwell-json", "source_file": "f",
        "source_line": 1, "op": "UPDATE", "raw_op": "update", "db": "d", "db_schema": None, "table_name": "t",
        "event_time": None, "event_time_unit": None, "sync_time": None, "tx_id": None, "seq": None,
        "position": None, "pk_columns": None, "before": {"v": "3752.0", "w": None}, "after": {"v": "0", "w": None},
        "column_types": {"v": "UNKNOWN", "w": "UNKNOWN"}, "source_types": None, "ddl": None,
        "meta": {"cdc.json_numbers": '["v"]'},
    }  # fmt: skip
    targets = ("dts-avro", "oms-canal", "oms-default")
    again, skipped, rejects = convert_everywhere([event], tmp_path, targets=targets)
    assert carry_failures([event], again, skipped, rejects, targets=targets) == []
