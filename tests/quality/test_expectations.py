"""The GX suite counts what our rules count, on a partition with one broken event per case, and its
Data Docs are linked from the report (one test: importing and running GX costs ~10-30 s here)."""

from __future__ import annotations

import json

from cdc_pipelines.quality import write_quality_report
from tests.quality.rows import clean_events, event

IMAGE = {"id": "1", "name": "a", "created": "2024-01-01 10:00:00.123"}


def test_gx_suite_matches_our_rules_and_its_docs_are_linked(judged_day, tmp_path):
    events = clean_events()
    broken = [
        event(before=IMAGE),  # INSERT with a before image
        event(op="DELETE", before=None, after=None),  # DELETE without one
        event(event_time_unit="s"),  # seconds where millis are promised
        event(after={"id": None, "name": "a"}),  # null PK
        event(
            source_format="oms-default",
            event_time_unit="s",
            column_types={},
            meta={"record_primary_value": "2"},  # the image's PK is 1
        ),
        event(source_format="dataworks-json", op="UPDATE", raw_op="UPDATE_BEFOR", before=IMAGE, after=None),
        {**events[0], "source_line": 99},  # duplicate event
    ]
    day = judged_day([*events, *broken], gx=tmp_path / "reports" / "dt=2024-01-01")
    results, counts, gx = day.results, day.event_counts, day.gx
    ours = {r.rule: r for r in results}

    assert not gx.success
    by_rule = {o.rule: o for o in gx.outcomes if o.check is None}
    assert set(by_rule) == {"image_presence_check", "timestamp_precision_check", "pk_consistency_check"}
    for rule, outcome in by_rule.items():
        assert (outcome.checked, outcome.failed, outcome.success) == (ours[rule].checked, ours[rule].failed, False)
    sub = {(o.rule, o.check): {"checked": o.checked, "failed": o.failed} for o in gx.outcomes if o.check}
    assert sub == {(rule, check): c for rule in by_rule for check, c in ours[rule].checks.items()}
    assert sub[("pk_consistency_check", "split_update_paired")] == {"checked": 1, "failed": 1}
    assert sub[("image_presence_check", "insert_upsert")]["failed"] == 1
    assert all(o.success == (o.failed == 0) for o in gx.outcomes)

    docs = gx.docs_index.parent
    assert gx.docs_index.is_file() and (docs / "expectations" / "cdc_event_rules.html").is_file()
    assert any((docs / "validations").rglob("*.html"))
    html_path = write_quality_report(results, tmp_path / "reports", "2024-01-01", event_counts=counts, gx=gx)
    assert '<a href="gx/index.html">Data Docs</a>' in html_path.read_text()
    summary = json.loads((html_path.parent / "summary.json").read_text())
    assert summary["great_expectations"]["data_docs"] == "gx/index.html"
    assert len(summary["great_expectations"]["expectations"]) == len(gx.outcomes)
