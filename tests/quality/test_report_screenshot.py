"""The HTML report renders in a real browser: headless Chromium (installed by scripts/setup) screenshots
index.html, and the PNG shows the page's tables, its pass/fail badges and its inline SVG charts (op
colours of the hourly bars, the lag histogram, the red frame of a topic that stands out)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cdc_pipelines.quality import RuleResult, write_quality_report
from cdc_pipelines.quality.activity import Activity, TopicLag
from cdc_pipelines.quality.charts import FLAG_FILL, LAG_COLOUR, OP_COLOURS
from cdc_pipelines.quality.expectations import ExpectationOutcome, GxReport
from tests.quality.png import colours, read_png

WIDTH, HEIGHT = 1280, 2200
HEADER_GREY = (243, 243, 243)  # th background
PASS_GREEN = (42, 125, 42)
FAIL_RED = (187, 34, 34)


def _rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def _activity() -> Activity:
    steady = {h: {"INSERT": 30, "UPDATE": 10} for h in range(24)}
    gappy = {h: ({"INSERT": 20, "DELETE": 5} if h < 8 or h > 15 else {}) for h in range(24)}
    lag = {"<=0": 0, "1e-2s": 300, "1e-1s": 600, "1e0s": 60, "1e3s": 4}
    return Activity(
        dt="2024-01-01",
        hourly={"gappy": gappy, "steady": steady},
        outside_day={},
        lag={
            "gappy": TopicLag(400, 0.05, 0.4, 2.0, 7200.0, 0, lag),
            "steady": TopicLag(960, 0.2, 0.5, 0.9, 1.5, 0, {**lag, "1e3s": 0}),
        },
        flags={"gappy": ["no events for 8 consecutive hours", "lag jumps to 7200.0 s (median 0.050 s)"]},
    )


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
    return write_quality_report(results, out, "2024-01-01", event_counts=counts, gx=gx, activity=_activity())


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
    # the charts: stacked bars in each op's colour, the lag histogram, the flagged topic's tinted panels
    for colour in (OP_COLOURS["INSERT"], OP_COLOURS["UPDATE"], OP_COLOURS["DELETE"], LAG_COLOUR, FLAG_FILL):
        assert seen.get(_rgb(colour), 0) > 10, colour
