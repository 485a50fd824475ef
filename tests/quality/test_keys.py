"""pk_consistency_check: known, present, stable PKs; OMS record_primary_value; unique event ids."""

from __future__ import annotations

from tests.quality.rows import clean_events, event, failing_rules, reject

RULE = "pk_consistency_check"

ROW = {"id1": "3", "id2": "129", "name": "a"}


def test_null_pk_value_fails_only_this_rule(judged):
    bad = event(after={"id": None, "name": "a"})
    assert failing_rules(judged([*clean_events(), bad])) == {"pk_consistency_check": ["PK value after id null"]}


def test_mismatched_record_primary_value_fails_only_this_rule(judged):
    oms = {"source_format": "oms-default", "event_time_unit": "s", "pk_columns": ["id1", "id2"], "column_types": {}}
    rows = [
        event(**oms, after=ROW, meta={"record_primary_value": "3\u0001129"}),
        event(**oms, op="DELETE", after=None, before=ROW, meta={"record_primary_value": "3\u0001129"}),
        event(**oms, after=ROW, meta={"record_primary_value": "3\u0001130"}),
    ]
    assert failing_rules(judged([*clean_events(), *rows])) == {
        "pk_consistency_check": ["meta record_primary_value does not match the image's PK values"]
    }
    result = judged(rows)[RULE]
    assert result.checks["record_primary_value"] == {"checked": 3, "failed": 1}


def test_duplicate_event_id_fails_only_this_rule(judged):
    events = clean_events()
    dup = {**events[0], "source_line": 99}
    assert failing_rules(judged([*events, dup])) == {
        "pk_consistency_check": ["duplicate event_id (2 events)", "duplicate event_id (2 events)"]
    }


def test_missing_pk_columns_and_key_changes(judged):
    rows = [
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}, event_id="key-change"),
        event(
            op="UPDATE",
            before={"id": "1"},
            after={"id": "2"},
            meta={"cdc.changed_columns": '["name"]'},
            event_id="unlisted",
        ),
        event(op="UPDATE", before={"id": "1"}, after={"id": "2"}, meta={"cdc.changed_columns": '["id"]'}),
        event(op="DELETE", before={"name": "x"}, after=None, event_id="pk-missing"),
        event(pk_columns=None, event_id="pk-unknown"),  # other events of shop.orders name a PK
        event(pk_columns=None, table_name="logs"),  # a table without PK: reported apart
        event(pk_columns=None, source_format="oms-debezium", table_name="dbz"),  # format names no PK
    ]
    result = judged(rows)[RULE]
    assert sorted((e["id"], e["reason"]) for e in result.examples) == [
        ("pk-missing", "PK value before id missing"),
        ("pk-unknown", "no PK columns although other events of its table have them"),
        ("unlisted", "PK changed but cdc.changed_columns omits it: id"),
    ]
    assert result.info["key_changes"] == 2
    assert result.info["no_pk_table_events"] == 1
    assert result.info["pk_not_named_events"] == 1
    assert result.info["tables_without_pk"] == ["orders/shop.logs"]
    assert result.checks["pk_known"] == {"checked": 6, "failed": 1}
    assert result.checks["pk_unchanged"] == {"checked": 3, "failed": 1}


def test_orphan_update_befor_rejected_by_the_decoder_fails_only_this_rule(judged):
    # 20 clean events, a paired split update (2 messages) and the orphan: 1 reject in 23 messages stays
    # under the 5 % reject rate
    paired = event(
        source_format="dataworks-json",
        op="UPDATE",
        raw_op="UPDATE_AFTER",
        before={"id": "1", "name": "a"},
        meta={"cdc.before_source_line": "30", "cdc.before_raw_op": "UPDATE_BEFOR"},
    )
    events = [e for _ in range(4) for e in clean_events()] + [paired]
    orphan = reject(21, "UPDATE_BEFOR without its matching after half (pair key 1620457642589000001)")
    assert failing_rules(judged(events, recorded={"orders": {"read": 23}}, rejects=[orphan])) == {
        "pk_consistency_check": [orphan["reason"]]
    }
    result = judged(events, rejects=[orphan])[RULE]
    assert result.checks["split_update_paired"] == {"checked": 2, "failed": 1}
    assert result.groups[-1] == {
        "source_topic": "orders",
        "table": "(rejected messages)",
        "checked": 1,
        "failed": 1,
        "key_changes": 0,
        "no_pk_table_events": 0,
        "pk_not_named_events": 0,
    }
    assert result.examples == [
        {
            "id": "file:/x/part-1.jsonl:21",
            "reason": orphan["reason"],
            "source_topic": "orders",
            "table": "(rejected messages)",
        }
    ]


def test_split_update_halves_alone_in_the_table(judged):
    image = {"id": "1", "name": "a"}
    split = {"source_format": "dataworks-json", "op": "UPDATE"}
    rows = [
        event(**split, raw_op="UPDATE_AFTER", before=image, meta={"cdc.before_source_line": "3"}),  # paired
        event(**split, raw_op="UPDATE_AFTER", before=image),  # merged=true: one message with both images
        event(**split, raw_op="UPDATE_AFTER", event_id="lone-after"),
        event(
            **{**split, "source_format": "dts-shareplex"},
            raw_op="UPDATE BEFORE",
            before=image,
            after=None,
            event_id="lone-before",
        ),
        event(op="UPDATE", raw_op="UPDATE", before=image),  # not a split format's half: not checked
    ]
    result = judged(rows)[RULE]
    assert result.checks["split_update_paired"] == {"checked": 4, "failed": 2}
    assert sorted((e["id"], e["reason"]) for e in result.examples) == [
        ("lone-after", "UPDATE_AFTER half without its before half"),
        ("lone-before", "UPDATE BEFORE half without its after half"),
    ]
