"""write_quality_report: a self-contained HTML page with every data value escaped, and summary.json."""

from __future__ import annotations

import json

from cdc_pipelines.quality import RuleResult, write_quality_report


def test_report_escapes_data_and_writes_summary(tmp_path):
    results = [
        RuleResult(
            rule="image_presence_check",
            checked=2,
            failed=1,
            passed=False,
            threshold=0.0,
            checks={"insert_upsert": {"checked": 2, "failed": 1}},
            groups=[{"source_topic": "t<1>", "table": "db.<b>", "checked": 2, "failed": 1}],
            examples=[{"id": "e1", "reason": "<script>alert(1)</script>", "source_topic": "t", "table": "x&y"}],
        ),
        RuleResult(
            rule="conservation_check",
            checked=3,
            failed=1,
            passed=True,
            threshold=0.5,
            info={"read": 3, "reject_reasons": [{"reason": 'bad "json" <x>', "count": 1}]},
        ),
    ]
    counts = [{"source_topic": "t<1>", "table": "db.<b>", "ops": {"INSERT": 2, "DELETE": 1}}]
    html_path = write_quality_report(results, tmp_path / "reports", "2024-01-02", event_counts=counts)
    assert html_path == tmp_path / "reports" / "dt=2024-01-02" / "index.html"
    html = html_path.read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "x&amp;y" in html and "t&lt;1&gt;" in html and "bad &quot;json&quot; &lt;x&gt;" in html
    assert '<span class="fail">FAIL</span>' in html and "http" not in html  # nothing external
    summary = json.loads((html_path.parent / "summary.json").read_text())
    assert summary["passed"] is False
    assert summary["rules"]["conservation_check"]["info"]["read"] == 3
    assert summary["rules"]["image_presence_check"]["examples"][0]["reason"] == "<script>alert(1)</script>"
    assert summary["event_counts"] == counts
