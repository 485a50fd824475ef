"""Bad input never crashes a run and never disappears: it goes to rejects with a reason."""

from __future__ import annotations

import json

import pytest

GOOD = (
    '{"allMetaData":{"db":"d","table_name":"t","timestamp":"1700000000"},"recordType":"INSERT","postStruct":{"id":1}}'
)
CASES = [
    ("", "empty line"),
    ("   ", "empty line"),
    ("not json at all", "not a valid JSON object"),
    ('{"recordType": "INSERT", "postStruct": {"id": 1}', "not a valid JSON object"),
    ("[1, 2, 3]", "not a valid JSON object"),
    ('{"allMetaData":{"table_name":"t"},"postStruct":{"id":1}}', "missing recordType"),
    (
        '{"allMetaData":{"table_name":"t"},"recordType":"UPSERTISH","postStruct":{"id":1}}',
        "unknown recordType 'UPSERTISH'",
    ),
    ('{"allMetaData":{"table_name":"t"},"recordType":"INSERT","postStruct":null}', "INSERT without an after image"),
    ('{"allMetaData":{"table_name":"t"},"recordType":"DELETE","postStruct":{"id":1}}', "DELETE without a before image"),
    ('{"allMetaData":{"table_name":"t"},"recordType":"UPDATE","postStruct":{"id":1}}', "UPDATE without a before image"),
    (
        '{"allMetaData":{"db":"d"},"recordType":"INSERT","postStruct":{"id":1}}',
        "row change without allMetaData.table_name",
    ),
    ('{"allMetaData":{"db":"d"},"recordType":"DDL","postStruct":{"ddl":""}}', "DDL without DDL text"),
    (GOOD + ' {"id":2}', "not a valid JSON object"),  # text after the object
    (
        GOOD.replace('"timestamp":"1700000000"', '"timestamp":"soon"'),
        "event time is neither an epoch number nor a date-time",
    ),
]


@pytest.fixture(scope="module")
def mixed(decode, tmp_path_factory):
    path = tmp_path_factory.mktemp("rejects") / "mixed.jsonl"
    lines = [GOOD] + [text for text, _ in CASES] + [GOOD]
    path.write_text("\n".join(lines) + "\n")
    return decode("oms-default", path)


def test_each_bad_line_is_rejected_with_its_reason(mixed):
    events, rejects, _ = mixed
    assert [e["source_line"] for e in events] == [1, len(CASES) + 2]
    assert [(r["source_line"], r["reason"]) for r in rejects] == [
        (i + 2, reason) for i, (_, reason) in enumerate(CASES)
    ]
    assert all(r["raw_encoding"] == "text" and r["source_format"] == "oms-default" for r in rejects)
    assert rejects[2]["raw"] == "not json at all"


def test_conservation(mixed):
    _, _, decoded = mixed
    counts = decoded.counts
    assert counts == {"read": len(CASES) + 2, "decoded": 2, "rejected": len(CASES), "filtered": 0, "events": 2}


def test_value_that_does_not_fit_its_type_is_rejected(decode, tmp_path):
    line = {
        "allMetaData": {"db": "d", "table_name": "t", "timestamp": "1700000000"},
        "recordType": "INSERT",
        "postStruct": {"b": "zz", "ok": 1, "__light_type": {"b": {"schemaType": "BOOL"}, "ok": {"schemaType": "BOOL"}}},
    }
    path = tmp_path / "typed.jsonl"
    path.write_text(json.dumps(line) + "\n")
    events, rejects, _ = decode("oms-default-extend", path)
    assert events == []
    assert [r["reason"] for r in rejects] == ["value does not fit its type in column(s) b:BOOLEAN"]


def test_hex_that_is_not_hex_is_rejected(decode, tmp_path):
    line = '{"payload":{"op":"c","after":{"b":"XYZ"},"source":{"db":"d","table":"t","ts_ms":0},"ts_ms":1}}'
    path = tmp_path / "hex.jsonl"
    path.write_text(line + "\n")
    events, rejects, _ = decode("oms-debezium", path, column_types="b:BYTES")
    assert events == [] and [r["reason"] for r in rejects] == ["value does not fit its type in column(s) b:BYTES"]


def test_message_over_the_size_limit_is_rejected_unparsed(decode, tmp_path, monkeypatch):
    monkeypatch.setenv("CDC_MAX_MESSAGE_CHARS", "200")
    path = tmp_path / "big.jsonl"
    big = GOOD.replace('"id":1', '"id":1,"pad":"' + "x" * 300 + '"')
    path.write_text(GOOD + "\n" + big + "\n")
    events, rejects, _ = decode("oms-default", path)
    assert [e["source_line"] for e in events] == [1]
    assert [(r["source_line"], r["reason"]) for r in rejects] == [
        (2, f"message of {len(big)} characters is over the limit of 200")
    ]


def test_noncharacters_are_data(decode, tmp_path):
    """U+FDD0 is a value like any other (the exact reader marks nothing inside the text)."""
    path = tmp_path / "fdd0.jsonl"
    path.write_text(GOOD.replace('"id":1', '"id":"\\ufdd01","n":-0') + "\n")
    events, rejects, _ = decode("oms-default", path)
    assert rejects == [] and events[0]["after"] == {"id": "\ufdd01", "n": "-0"}
