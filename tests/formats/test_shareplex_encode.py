"""SharePlex JSON encoders (OMS and DTS): decode(encode(x)) == x, and the emitted JSON is the seed's."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

from cdc_pipelines.formats import get_codec
from cdc_pipelines.formats.encoding import Unsupported
from tests.conftest import CARRIED_EVERYWHERE, SAME_FORMAT_FIELDS, carried, parse, resource
from tests.decode.oracles import encode_local
from tests.formats.seed_values import DOUBLE_MIN_EXPANSION

# where the before half of a paired DTS split update came from: a re-encoded pair sits in another
# file at other lines, so this lineage cannot survive a round trip (everything else does)
BEFORE_HALF_LINEAGE = ("cdc.before_source_file", "cdc.before_source_line")
SPLIT_AND_LONG_OPS = [
    '{"meta":{"op":"UPDATE AFTER","table":"S.T","trans":"9.1","rowid":"AAA","time":"2017-06-16T14:24:34","seq":2},'
    '"data":{"ID":"1","V":"new"}}',
    '{"meta":{"op":"UPDATE BEFORE","table":"S.T","trans":"9.1","rowid":"AAA","time":"2017-06-16T14:24:34","seq":2},'
    '"data":{"ID":"1","V":"old"}}',
    '{"meta":{"op":"TRUNCATE","table":"S.T","trans":"9.2","time":"2017-06-16T14:25:00"}}',
    '{"meta":{"op":"DROP COLUMN","table":"S.T","time":"2017-06-16T14:26:00"},'
    '"sql":{"ddl":"ALTER TABLE S.T DROP COLUMN V"}}',
    '{"meta":{"op":"INSERT","table":"S.T","userid":84,"seq":3},"data":{"ID":"2","V":"x"}}',
]


def bag(events, fields=SAME_FORMAT_FIELDS) -> list[str]:
    """The events' fields as a sorted list of JSON texts.

    Compared as a multiset: these tests check what each event carries, not the line order of the
    re-encoded file (which `write_encoded` is responsible for).
    """
    kept = []
    for e in events:
        e = carried(e, fields)
        if "meta" in e and e["meta"]:
            e["meta"] = {k: v for k, v in e["meta"].items() if k not in BEFORE_HALF_LINEAGE}
        kept.append(json.dumps(e, sort_keys=True, default=str))
    return sorted(kept)


def encoded_messages(events: list[dict], format_id: str) -> list[str]:
    return [message for _, _, message in encode_local(events, format_id)[0]]


def test_same_format_round_trip_is_exact_oms(roundtrip):
    events, again, counts = roundtrip("oms-shareplex", resource("oms-shareplex", "seed.jsonl"), "oms-shareplex")
    assert counts == {"written": 4, "skipped": 0, "encoded": 4} and len(again) == 4
    assert bag(again) == bag(events)


def test_same_format_round_trip_is_exact_dts(roundtrip, tmp_path):
    # the DTS seed plus a split update (two messages, paired into one UPDATE) and the long op names
    shutil.copy(resource("dts-shareplex", "seed.jsonl"), tmp_path / "seed.jsonl")
    (tmp_path / "long_ops.jsonl").write_text("\n".join(SPLIT_AND_LONG_OPS) + "\n")
    events, again, counts = roundtrip("dts-shareplex", tmp_path, "dts-shareplex")
    assert len(events) == len(again) == 7 and counts["skipped"] == 0
    assert counts["written"] == 8  # the split update goes out again as its two halves
    assert bag(again) == bag(events)
    split = next(e for e in again if e["raw_op"] == "UPDATE AFTER")
    assert (split["before"], split["after"]) == ({"ID": "1", "V": "old"}, {"ID": "1", "V": "new"})
    assert split["meta"]["cdc.before_raw_op"] == "UPDATE BEFORE"


@pytest.mark.parametrize("format_id", ["oms-shareplex", "dts-shareplex"])
def test_emitted_json_is_the_seed_message(decode, format_id):
    path = resource(format_id, "seed.jsonl")
    _, _, decoded = decode(format_id, path)
    seed = [parse(line) for line in path.read_text().splitlines() if line.strip()]
    messages = encoded_messages(decoded.events, format_id)
    assert [parse(m) for m in messages] == seed
    # the twin writes the very same messages (both seeds use the short op names)
    twin = "dts-shareplex" if format_id == "oms-shareplex" else "oms-shareplex"
    assert [parse(m) for m in encoded_messages(decoded.events, twin)] == seed
    if format_id == "oms-shareplex":  # numbers keep their digits; meta numbers stay numbers
        assert '"col17":10223372036854775806' in messages[0] and f'"col5":{DOUBLE_MIN_EXPANSION}' in messages[0]
        assert '"size":10' in messages[0] and '"seq":1' in messages[0] and '"trans":null' in messages[3]
    else:
        assert '"userid":84' in messages[0]


@pytest.mark.parametrize(
    ("source", "name", "target"),
    [("oms-dataworks", "seed.jsonl", "oms-shareplex"), ("dts-canal", "seed.jsonl", "dts-shareplex")],
)
def test_cross_format_round_trip_carries_rows_and_ddl(roundtrip, source, name, target):
    events, again, counts = roundtrip(source, resource(source, name), target)
    carriable = [e for e in events if e["op"] in ("INSERT", "UPDATE", "DELETE", "DDL")]
    # SharePlex has no heartbeat: the DataWorks 2.0 HEARTBEAT is skipped, with its reason
    assert counts["skipped"] == len(events) - len(carriable)
    assert counts["written"] == len(again) == len(carriable)
    assert bag(again, CARRIED_EVERYWHERE) == bag(carriable, CARRIED_EVERYWHERE)
    # SharePlex has no PK names; the OMS row id carries the PK values instead
    assert all(e["pk_columns"] is None for e in again)
    if target == "oms-shareplex":
        insert = next(e for e in again if e["op"] == "INSERT")
        assert insert["meta"]["meta.rowid"] == "db.tab-"  # PK names pkName1/pkName12 are not columns
        assert insert["meta"]["meta.time"] == "2022-03-18T05:23:20"


def _event(**fields) -> dict:
    event = {
        "source_format": "oms-canal", "op": "INSERT", "raw_op": "INSERT", "db": "shop", "db_schema": None,
        "table_name": "orders", "event_time": dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC),
        "event_time_unit": "ms", "sync_time": dt.datetime(2024, 1, 2, 3, 4, 6, tzinfo=dt.UTC), "tx_id": None,
        "seq": "7", "position": None, "pk_columns": ["id", "k"], "before": None, "after": None,
        "column_types": None, "source_types": None, "ddl": None, "meta": None,
    }  # fmt: skip
    return event | fields


ROW = {"id": "1", "k": "a", "at": "2020-11-24T16:01:02.012345Z", "v": "x"}
TYPES = {"id": "INT", "k": "STRING", "at": "TIMESTAMP", "v": "STRING"}


def test_cross_format_meta_and_values_field_by_field():
    event = _event(after=ROW, column_types=TYPES, meta={"cdc.json_numbers": '["id"]'})
    oms = get_codec("oms-shareplex").encode(event, {})[0]
    assert parse(oms) == {
        "data": {"id": "1", "k": "a", "at": "1606233662.012345", "v": "x"},
        "meta": {"time": "2024-01-02T03:04:05", "op": "ins", "posttime": "2024-01-02T03:04:06", "seq": "7",
                 "table": "shop.orders", "rowid": "shop.orders-1\u0001a", "trans": None, "scn": "null"},
    }  # fmt: skip
    assert '"id":1' in oms and '"seq":7' in oms
    # DTS: only the fields it has; TIMESTAMP keeps its canonical text (SharePlex carries no types)
    dts = parse(get_codec("dts-shareplex").encode(event, {})[0])
    assert dts["data"]["at"] == "2020-11-24T16:01:02.012345Z"
    assert sorted(dts["meta"]) == ["op", "posttime", "rowid", "seq", "table", "time"]


@pytest.mark.parametrize("format_id", ["oms-shareplex", "dts-shareplex"])
def test_timezone_option_writes_wall_clock_text_and_round_trips(roundtrip, format_id):
    codec, opts = get_codec(format_id), {"timezone": "+08:00"}
    message = parse(codec.encode(_event(after=ROW, column_types=TYPES), opts)[0])
    assert (message["meta"]["time"], message["meta"]["posttime"]) == ("2024-01-02T11:04:05", "2024-01-02T11:04:06")
    path = resource(format_id, "seed.jsonl")
    events, again, counts = roundtrip(format_id, path, format_id, source_options=opts, decode_options=opts, **opts)
    assert counts["skipped"] == 0 and bag(again) == bag(events)
    # built from the canonical times (as for another format's event), the text is written back in the zone
    other = [{**e, "source_format": "oms-canal"} for e in events]
    for e in other:
        e["event_time"] = e["event_time"].replace(tzinfo=dt.UTC)
        e["sync_time"] = e["sync_time"] and e["sync_time"].replace(tzinfo=dt.UTC)
    rewritten = [parse(codec.encode(e, opts)[-1])["meta"] for e in other]
    seed = [parse(line)["meta"] for line in path.read_text().splitlines() if line.strip()]
    assert [(m["time"], m.get("posttime")) for m in rewritten] == [(m["time"], m.get("posttime")) for m in seed]


def test_update_key_is_before_and_data_the_changed_columns():
    before, after = {"id": "1", "v": "a", "w": "same"}, {"id": "1", "v": "b", "w": "same", "new": "n"}
    message = parse(get_codec("oms-shareplex").encode(_event(op="UPDATE", before=before, after=after), {})[0])
    assert (message["key"], message["data"], message["meta"]["op"]) == (before, {"v": "b", "new": "n"}, "upd")
    ddl = parse(get_codec("dts-shareplex").encode(_event(op="DDL", ddl="DROP TABLE t", pk_columns=None), {})[0])
    assert (ddl["data"], ddl["sql"], ddl["meta"]["op"]) == ({}, {"ddl": "DROP TABLE t"}, "ddl")
    truncate = parse(get_codec("dts-shareplex").encode(_event(op="TRUNCATE"), {})[0])
    assert (truncate["meta"]["op"], "data" in truncate) == ("TRUNCATE", False)


def test_a_dotted_database_cannot_be_told_from_the_table():
    # meta.table is `db.table`; the decoder splits at the first dot, so an OceanBase `tenant.db`
    # comes back as db `tenant`, table `db.orders` (a known loss, listed in the docs)
    message = parse(get_codec("oms-shareplex").encode(_event(db="tenant.shop", after={"id": "1"}), {})[0])
    assert message["meta"]["table"] == "tenant.shop.orders"


@pytest.mark.parametrize(
    ("format_id", "fields", "reason"),
    [
        ("oms-shareplex", {"op": "TRUNCATE"}, "OMS SharePlex has no TRUNCATE op"),
        ("oms-shareplex", {"op": "HEARTBEAT"}, "OMS SharePlex has no HEARTBEAT op"),
        ("dts-shareplex", {"op": "HEARTBEAT"}, "DTS SharePlex has no HEARTBEAT op"),
        ("dts-shareplex", {"op": "UPSERT", "after": {"id": "1"}}, "DTS SharePlex has no UPSERT op"),
        ("oms-shareplex", {"op": "TX_END"}, "OMS SharePlex has no TX_END op"),
        ("dts-shareplex", {"op": "UPDATE", "after": {"id": "1"}}, "UPDATE without a before image"),
    ],
)
def test_what_shareplex_cannot_carry(format_id, fields, reason):
    with pytest.raises(Unsupported, match=reason):
        get_codec(format_id).encode(_event(**fields), {})
