"""DataHub TUPLE rows (seed 004 example table), from JSON lines and from CSV."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import resource

HEADER = "_sequence_id_,_operation_type_,_excute_time_,_source_table_,_before_image_,_after_image_,id,name,note"


@pytest.mark.parametrize("name", ["seed.jsonl", "seed.csv"])
def test_seed_table(decode, name):
    events, rejects, decoded = decode("datahub-tuple", resource("datahub-tuple", name), table="orders")
    assert rejects == []
    assert [(e["op"], e["raw_op"], e["seq"]) for e in events] == [
        ("INSERT", "I", "1649991610688000000"),
        ("UPDATE", "U", "1649991610688000001"),
        ("DELETE", "D", "1649991610688000002"),
    ]
    insert, update, delete = events
    assert (insert["before"], insert["after"], insert["table_name"]) == (None, {}, "orders")
    assert (update["before"], update["after"]) == ({}, {})
    assert (update["event_time"], update["event_time_unit"]) == (dt.datetime(2022, 4, 15, 3, 2, 36), "ms")
    assert (delete["before"], delete["after"]) == ({}, None)
    assert insert["meta"]["_after_image_"] == "Y" and delete["meta"]["_before_image_"] == "Y"
    assert decoded.counts == {"read": 4, "decoded": 4, "rejected": 0, "filtered": 0, "events": 3}


def test_csv_with_business_columns_quotes_and_orphans(decode, tmp_path):
    path = tmp_path / "orders.csv"
    path.write_text(
        "\r\n".join([
            HEADER,
            '1,I,1649991726000,shop.orders,N,Y,7,"Smith, ""Jo""",',
            '2,U,1649991756000,shop.orders,Y,N,7,"Smith, ""Jo""",""',
            '2,U,1649991756000,shop.orders,N,Y,7,Smythe,note',
            '3,U,1649991757000,shop.orders,Y,N,8,lonely,',
            "4,D,1649991774000,shop.orders,Y,N,7",
        ]) + "\r\n"
    )  # fmt: skip
    events, rejects, decoded = decode("datahub-tuple", path)
    assert [(e["op"], e["before"], e["after"]) for e in events] == [
        ("INSERT", None, {"id": "7", "name": 'Smith, "Jo"', "note": None}),
        ("UPDATE", {"id": "7", "name": 'Smith, "Jo"', "note": ""}, {"id": "7", "name": "Smythe", "note": "note"}),
    ]
    assert events[0]["table_name"] == "shop.orders"
    assert [(r["source_line"], r["reason"]) for r in rejects] == [
        (5, "U without its matching after half (pair key shop.orders\u00013)"),
        (6, "CSV row has 7 fields, its header 9"),
    ]
    # the header is no message
    assert decoded.counts == {"read": 5, "decoded": 3, "rejected": 2, "filtered": 0, "events": 2}
