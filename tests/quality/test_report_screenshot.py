"""The HTML report renders in a real browser: headless Chromium (installed by scripts/setup) screenshots
index.html, and the PNG shows the page's tables and its pass/fail badges."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cdc_pipelines.quality import RuleResult, write_quality_report
from cdc_pipelines.quality.expectations import ExpectationOutcome, GxReport
from tests.quality.png import colours, read_png

WIDTH, HEIGHT = 1280, 1600
HEADER_GREY = (243, 243, 243)  # th background
PASS_GREEN = (42, 125, 42)
FAIL_RED = (187, 34, 34)


def _report(out: Path) -> Path:
    results = [
        RuleResult(
            rule="image_presence_check",
            checked=12,
            failed=1,
            passed=False,
            threshold=0.0,
            checks={"insert_upsert": {"checked": 6, "failed": 1}, "delete": {"checked": 6, "failed": 0}},
            groups=[{"source_topic": "orders", "table": "shop.orders", "checked": 12, "failed": 1}],
            examples=[
                {
                    "id": "e0007",
                    "reason": "INSERT with a before image",
                    "source_topic": "orders",
                    "table": "shop.orders",
                }
            ],
        ),
        RuleResult(
            rule="conservation_check",
            checked=13,
            failed=1,
            passed=True,
            threshold=0.1,
            checks={"balance": {"checked": 1, "failed": 0}, "reject_rate": {"checked": 13, "failed": 1}},
            info={"read": 13, "decoded": 12, "rejected": 1, "reject_reasons": [{"reason": "empty line", "count": 1}]},
        ),
    ]
    counts = [{"source_topic": "orders", "table": "shop.orders", "ops": {"INSERT": 6, "DELETE": 6}}]
    gx = GxReport(
        success=False,
        outcomes=[ExpectationOutcome("image_presence_check", "image_presence_check", None, 12, 1, False)],
        docs_index=out / "dt=2024-01-01" / "gx" / "index.html",
    )
    return write_quality_report(results, out, "2024-01-01", event_counts=counts, gx=gx)


def test_report_renders_its_tables_in_headless_chromium(tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "Chromium is missing: scripts/setup installs it from Debian's packages"
    html = _report(tmp_path / "reports")
    png = tmp_path / "report.png"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # root in CI containers
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={WIDTH},{HEIGHT}",
            f"--screenshot={png}",
            html.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    width, height, _ = read_png(png)
    assert (width, height) == (WIDTH, HEIGHT)
    seen = colours(png)
    assert len(seen) > 20  # text, borders, badges: not a blank page
    for colour in (HEADER_GREY, PASS_GREEN, FAIL_RED):
        assert seen.get(colour, 0) > 10, colour
