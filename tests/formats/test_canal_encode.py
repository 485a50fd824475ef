"""Canal JSON encoders (OMS and DTS): decode(encode(x)) == x, and the emitted JSON is the seed's."""

from __future__ import annotations

import datetime as dt

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from tests.conftest import CARRIED_EVERYWHERE, bag, parse, resource
from tests.decode.oracles import encode_local
from tests.formats.seed_values import DOUBLE_MIN_EXPANSION

ROW_OPS = ("INSERT", "UPDATE", "DELETE")


def _order(encoded: tuple) -> tuple:
    event, part, _ = encoded
    return event["source_line"], int((event["meta"] or {}).get("cdc.row_index", 0)), part


def encoded_messages(events: list[dict], format_id: str, **options) -> list[str]:
    """The messages of events encoded in process, in input order (line, row, part)."""
    messages, _ = encode_local(events, format_id, options)
    return [m for _, _, m in sorted(messages, key=_order)]


@pytest.mark.parametrize(
    ("format_id", "name", "options"),
    [
        ("oms-canal", "seed.jsonl", {}),
        ("dts-canal", "seed.jsonl", {}),
        ("dts-canal", "seed-legacy.jsonl", {"legacy": "true"}),
    ],
)
def test_same_format_round_trip_is_exact(roundtrip, format_id, name, options):
    path = resource(format_id, name)
    events, again, counts = roundtrip(
        format_id, path, format_id, source_options=options, decode_options=options, **options
    )
    assert counts["skipped"] == 0 and counts["written"] == len(events) == len(again) > 0
    assert bag(again) == bag(events)


@pytest.mark.parametrize(
    ("format_id", "name", "options"),
    [
        ("oms-canal", "seed.jsonl", {}),
        ("dts-canal", "seed.jsonl", {}),
        ("dts-canal", "seed-legacy.jsonl", {"legacy": "true"}),
    ],
)
def test_emitted_json_is_the_seed_message(decode, format_id, name, options):
    path = resource(format_id, name)
    _, _, decoded = decode(format_id, path, **options)
    messages = encoded_messages(decoded.events, format_id, **options)
    seed = [line for line in path.read_text().splitlines() if line.strip()]
    assert [parse(m) for m in messages] == [parse(line) for line in seed]
    if format_id == "oms-canal":
        # the DTS twin writes the same messages without OMS's null fields, TIMESTAMP as binlog text
        twin = [parse(m) for m in encoded_messages(decoded.events, "dts-canal")]
        expected = [{k: v for k, v in parse(x).items() if v is not None} for x in seed]
        for message in expected[:3]:
            message["data"][0]["col14"] = "2020-11-24 16:01:02.012345"
        assert twin == expected
        # numbers keep their digits (never through a float or a long)
        insert = parse(messages[0])["data"][0]
        assert (insert["col13"], insert["col12"]) == ("10223372036854775806", DOUBLE_MIN_EXPANSION)
        assert '"col13":10223372036854775806' in messages[0] and f'"col4":{DOUBLE_MIN_EXPANSION}' in messages[0]
        assert '"es":1609344671000' in messages[0] and '"col14":"1606233662.012345"' in messages[0]


@pytest.mark.parametrize(
    ("source", "name", "target"),
    [("oms-default", "seed.jsonl", "dts-canal"), ("dataworks-json", "seed-002.jsonl", "oms-canal")],
)
def test_cross_format_round_trip_carries_rows_and_ddl(roundtrip, source, name, target):
    events, again, counts = roundtrip(source, resource(source, name), target)
    carriable = [e for e in events if e["op"] in (*ROW_OPS, "DDL")]
    # canal has no heartbeat (DataWorks Kafka JSON's MHEARTBEAT is skipped, with its reason)
    assert counts["skipped"] == len(events) - len(carriable)
    assert counts["written"] == len(again) == len(carriable)
    assert bag(again, CARRIED_EVERYWHERE) == bag(carriable, CARRIED_EVERYWHERE)
    if source == "oms-default":  # pk names, 13-digit millis from OMS epoch seconds
        assert {tuple(e["pk_columns"] or ()) for e in again} == {("id1", "id2"), ()}
        assert {e["event_time_unit"] for e in again} == {"ms"}
        assert sorted(e["event_time"] for e in again) == sorted(e["event_time"] for e in events)


def test_options_binary_timezone_and_multi_row(roundtrip, tmp_path):
    base = '"database":"d","table":"t","isDdl":false,"es":1600161894000,"ts":1600161894771'
    lines = [
        '{"database":"d","table":"t","type":"INSERT","isDdl":false,"es":1600161894000,'
        '"mysqlType":{"b":"varbinary(8)","ts":"timestamp(3)","p":"point"},"sqlType":{"b":-3,"ts":93,"p":-2},'
        '"data":[{"b":"\\u00ff\\u0000a","ts":"2023-03-23 15:00:10.120","p":"\\u0001"}]}',
        f'{{{base},"type":"UPDATE","pkNames":["id"],"mysqlType":{{"id":"bigint","v":"decimal(40,10)"}},'
        '"data":[{"id":"1","v":"1.50"},{"id":"2","v":"2.50"}],"old":[{"v":"1.00"},{"v":"2.00"}],"id":7,"gtid":"g:1"}',
        f'{{{base},"type":"INIT","mysqlType":{{"id":"bigint"}},"data":[{{"id":"3"}}]}}',
    ]
    path = tmp_path / "canal.jsonl"
    path.write_text("\n".join(lines) + "\n")
    opts = {"binary": "latin1", "timezone": "Asia/Shanghai"}
    events, again, counts = roundtrip("dts-canal", path, "dts-canal", source_options=opts, decode_options=opts, **opts)
    assert events[0]["after"] == {"b": "/wBh", "ts": "2023-03-23T07:00:10.120Z", "p": "AQ=="}
    # a two-row message goes out as one message per row: only its row count/index in meta differ
    assert counts == {"written": 4, "skipped": 0, "encoded": 4}
    row_shape = ("cdc.row_count", "cdc.row_index")
    for e in (*events, *again):
        e["meta"] = {k: v for k, v in e["meta"].items() if k not in row_shape}
    assert bag(again) == bag(events)
    assert {e["raw_op"] for e in again} == {"INSERT", "UPDATE", "INIT"}


def _event(**fields) -> dict:
    event = {
        "source_format": "oms-default", "op": "INSERT", "raw_op": "INSERT", "db": "shop", "db_schema": None,
        "table_name": "orders", "event_time": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        "event_time_unit": "s", "sync_time": None, "tx_id": "tx-9", "seq": "42", "position": None,
        "pk_columns": ["id"], "before": None, "after": None, "column_types": None, "source_types": None,
        "ddl": None, "meta": None,
    }  # fmt: skip
    return event | fields


TYPES = {"id": "INT", "ok": "BOOLEAN", "b": "BYTES", "at": "TIMESTAMP", "n": "UNKNOWN"}
ROW = {"id": "12345678901234567890123", "ok": "true", "b": "/wBh", "at": "2020-11-24T16:01:02.012345Z", "n": "x"}


def test_cross_format_envelope_field_by_field():
    event = _event(after=ROW, column_types=TYPES, meta={"cdc.json_numbers": '["id"]'})
    oms = parse(get_codec("oms-canal").encode(event, {"binary": "base64"})[0])
    assert oms == {
        "database": "shop", "table": "orders", "type": "INSERT", "isDdl": False, "sql": "", "old": None,
        "es": "1704164645000", "ts": None, "pkNames": ["id"],
        "data": [{"id": "12345678901234567890123", "ok": "true", "b": "/wBh", "at": "1606233662.012345", "n": "x"}],
        "mysqlType": {"id": "bigint", "ok": "boolean", "b": "blob", "at": "timestamp"},
        "sqlType": {"id": "-5", "ok": "16", "b": "2004", "at": "93"},
    }  # fmt: skip
    dts = parse(get_codec("dts-canal").encode(event, {"binary": "latin1", "timezone": "+08:00"})[0])
    assert (dts["id"], dts["gtid"], "ts" in dts, "old" in dts) == ("42", "tx-9", False, False)
    assert dts["data"] == [{"id": "12345678901234567890123", "ok": "true", "b": "\u00ff\u0000a",
                            "at": "2020-11-25 00:01:02.012345", "n": "x"}]  # fmt: skip


def test_update_old_holds_changed_columns_and_ddl_type():
    before, after = {"id": "1", "v": "a", "w": "same"}, {"id": "1", "v": "b", "w": "same"}
    update = _event(op="UPDATE", raw_op="u", before=before, after=after)
    message = parse(get_codec("oms-canal").encode(update, {})[0])
    assert (message["data"], message["old"]) == ([after], [{"v": "a"}])
    legacy = parse(get_codec("dts-canal").encode(update, {"legacy": "true"})[0])
    assert (legacy["old"], legacy["data"]) == ([after], [{"v": "a"}])
    delete = parse(get_codec("dts-canal").encode(_event(op="DELETE", before=before), {"legacy": "true"})[0])
    assert (delete["old"], "data" in delete) == ([before], False)
    ddl = _event(op="DDL", raw_op="DDL", ddl="ALTER TABLE t ADD c INT", pk_columns=None)
    for format_id, kind in (("oms-canal", "QUERY"), ("dts-canal", "DDL")):
        message = parse(get_codec(format_id).encode(ddl, {})[0])
        assert (message["type"], message["isDdl"], message["sql"]) == (kind, True, "ALTER TABLE t ADD c INT")
    alter = parse(get_codec("oms-canal").encode(ddl | {"raw_op": "ALTER"}, {})[0])
    assert alter["type"] == "ALTER"
    full_load = _event(raw_op="ROW", after={"id": "1"})
    assert parse(get_codec("dts-canal").encode(full_load, {})[0])["type"] == "INIT"
    assert parse(get_codec("oms-canal").encode(full_load, {})[0])["type"] == "INSERT"


@pytest.mark.parametrize("format_id", ["oms-canal", "dts-canal"])
@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"op": "UPSERT", "after": {"id": "1"}}, "canal has no UPSERT"),
        ({"op": "HEARTBEAT"}, "canal has no HEARTBEAT"),
        ({"op": "TX_BEGIN"}, "canal has no TX_BEGIN"),
        ({"op": "OTHER"}, "canal has no OTHER"),
        ({"op": "UPDATE", "after": {"id": "1"}}, "UPDATE without a before image"),
        ({"after": {"id": "1"}, "table_name": None}, "row change without a table name"),
    ],
)
def test_what_canal_cannot_carry(format_id, fields, reason):
    with pytest.raises(Unsupported, match=reason):
        get_codec(format_id).encode(_event(**fields), {})
