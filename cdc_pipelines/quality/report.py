"""The quality report a person opens: one static HTML page per partition plus a JSON summary.

Plain HTML with inline CSS, no scripts and no external assets, so it can be mailed, archived or
served from any bucket. Every value taken from the data is escaped: source data is untrusted text.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_pipelines.quality.activity import Activity
from cdc_pipelines.quality.charts import activity_charts, legend
from cdc_pipelines.quality.result import RuleResult

if TYPE_CHECKING:
    from cdc_pipelines.quality.expectations import GxReport

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;padding:0 2em;max-width:72em;color:#222;line-height:1.4}
h1{margin-bottom:.2em} h2{border-top:1px solid #ddd;padding-top:.8em;margin-top:1.6em} h3{margin-bottom:.3em}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.95em}
th,td{border:1px solid #ccc;padding:.3em .7em;text-align:left;vertical-align:top}
th{background:#f3f3f3} tbody tr:nth-child(even) td{background:#fafafa}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass,.fail{color:#fff;padding:.1em .5em;border-radius:.3em;font-size:.85em;font-weight:600}
.pass{background:#2a7d2a} .fail{background:#b22}
a{color:#0b5cad} code{word-break:break-all}
.charts{display:flex;flex-wrap:wrap;gap:.6em;margin:.4em 0}
"""


class _Markup(str):
    """Markup built here from escaped parts: written into a cell as is."""


def _cell(value: Any) -> str:
    if isinstance(value, _Markup):
        return f"<td>{value}</td>"
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, int | float):
        text = f"{value:.4f}" if isinstance(value, float) else str(value)
        return f'<td class="n">{escape(text)}</td>'
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return f"<td>{escape('' if value is None else str(value))}</td>"


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    rows = list(rows)
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _badge(passed: bool) -> _Markup:
    return _Markup('<span class="pass">PASS</span>' if passed else '<span class="fail">FAIL</span>')


def _event_section(event_counts: Sequence[dict]) -> str:
    ops = sorted({op for e in event_counts for op in e["ops"]})
    rows = [
        [e["source_topic"], e["table"], *[e["ops"].get(op, 0) for op in ops], sum(e["ops"].values())]
        for e in event_counts
    ]
    return "<h2>Events by topic, table and op</h2>" + _table(["source_topic", "table", *ops, "total"], rows)


def _rule_section(r: RuleResult) -> str:
    """A rule's figures, then its tables under their headings (those that do not apply to it left out: None)."""
    info = [[k, v] for k, v in r.info.items() if k != "reject_reasons"]
    keys = [k for k in r.groups[0] if k not in ("source_topic", "table")] if r.groups else []
    reasons = [[x["reason"], x["count"]] for x in r.info["reject_reasons"]] if "reject_reasons" in r.info else None
    sections = [
        ("Sub-checks", ["check", "checked", "failed"], [[n, c["checked"], c["failed"]] for n, c in r.checks.items()]),
        ("Figures (not failures)", ["figure", "value"], info or None),
        ("Top reject reasons", ["reason", "count"], reasons),
        (
            "By topic and table",
            ["source_topic", "table", *keys],
            [[g[k] for k in ("source_topic", "table", *keys)] for g in r.groups] or None,
        ),
        (
            "Failing examples",
            ["id", "source_topic", "table", "reason"],
            [[e.get(k) for k in ("id", "source_topic", "table", "reason")] for e in r.examples],
        ),
    ]
    head = f'<h2 id="{escape(r.rule)}">{escape(r.rule)} {_badge(r.passed)}</h2>'
    figures = _table(
        ["checked", "failed", "failure ratio", "threshold"], [[r.checked, r.failed, r.failure_ratio, r.threshold]]
    )
    tables = [f"<h3>{title}</h3>\n" + _table(headers, rows) for title, headers, rows in sections if rows is not None]
    return "\n".join([head, figures, *tables])


_ACTIVITY_COLUMNS = ("source_topic", "events in the day", "no time or other day", "with lag", "p50 s", "p95 s",
                     "p99 s", "max s", "negative", "stands out")  # fmt: skip


def _activity_section(activity: Activity | None) -> str:
    """Hourly volume and lag: one row of two pictures per topic, flagged topics first, then the figures."""
    if activity is None:
        return ""
    rows = []
    for topic in sorted(set(activity.hourly) | set(activity.lag)):
        lag = activity.lag.get(topic)
        events = sum(sum(ops.values()) for ops in activity.hourly.get(topic, {}).values())
        seconds = (
            [None if v is None else round(v, 6) for v in (lag.p50, lag.p95, lag.p99, lag.max)] if lag else [None] * 4
        )
        flags = "; ".join(activity.flags.get(topic, [])) or None
        rows.append([topic, events, activity.outside_day.get(topic, 0), lag.events if lag else 0, *seconds,
                     lag.negative if lag else 0, flags])  # fmt: skip
    panels = "".join(f'<div class="charts">{hourly}{lag or ""}</div>' for _, hourly, lag in activity_charts(activity))
    flagged = ", ".join(sorted(activity.flags)) or "none"
    head = '<h2 id="activity">Volume and replication lag through the day</h2>'
    text = f"<p>Topics that stand out (red frame): {escape(flagged)}. Lag is sync_time - event_time in seconds.</p>"
    return "\n".join([head, text, legend(), panels, _table(_ACTIVITY_COLUMNS, rows)])


def _gx_section(gx: GxReport | None, link: str | None) -> str:
    if gx is None:
        return ""
    rows = [[o.rule, o.check or "(any sub-check)", o.checked, o.failed, _badge(o.success)] for o in gx.outcomes]
    text = f'The event rules as a GX expectation suite: <a href="{escape(link or "")}">Data Docs</a> '
    text += "(conservation and rejected orphan halves are checked above only)."
    if not gx.offline:
        text += " Its pages load their CSS and scripts from public CDNs: scripts/setup installs local copies."
    head = f'<h2 id="great_expectations">Great Expectations {_badge(gx.success)}</h2>'
    return "\n".join([head, f"<p>{text}</p>", _table(["rule", "check", "checked", "failed", "result"], rows)])


def _snapshot_section(snapshot: dict | None) -> str:
    """The day's table snapshots (see `cdc_pipelines.snapshots`): rows and anomalies per table, examples."""
    if snapshot is None:
        return ""
    tables = [[name, t["rows"], t["anomalies"]] for name, t in snapshot["per_table"].items()]
    skipped = [[s["table"], s["reason"], s["events"]] for s in snapshot["skipped_tables"]]
    examples = [[e["kind"], e["event_id"], e["op"], ".".join(filter(None, (e["db"], e["db_schema"], e["table_name"]))),
                 e["detail"]] for e in snapshot["examples"]]  # fmt: skip
    head = f'<h2 id="snapshots">Table snapshots {_badge(snapshot["anomalies"] == 0)}</h2>'
    text = f"<p>{snapshot['tables']} tables, {snapshot['rows']} rows after {snapshot['applied']} changes applied "
    text += f"to the snapshot of {escape(str(snapshot['previous_dt'] or 'nothing (first day)'))}.</p>"
    parts = [head, text, _table(["table", "rows", "anomalies"], tables), "<h3>Tables not applied</h3>"]
    parts += [_table(["table", "reason", "events"], skipped), "<h3>Anomaly examples</h3>"]
    return "\n".join([*parts, _table(["kind", "event id", "op", "table", "detail"], examples)])


def render_html(
    results: Sequence[RuleResult], dt_value: str, event_counts: Sequence[dict], gx: GxReport | None,
    gx_link: str | None, activity: Activity | None, snapshot: dict | None,
) -> str:  # fmt: skip
    """The report page as one self-contained HTML string (the GX Data Docs it links are a separate site)."""
    overall = all(r.passed for r in results)
    links = [_Markup(f'<a href="#{escape(r.rule)}">{escape(r.rule)}</a>') for r in results]
    rows = [[link, _badge(r.passed), r.checked, r.failed] for link, r in zip(links, results, strict=True)]
    gx_line = f'<p>Great Expectations: <a href="{escape(gx_link or "")}">Data Docs</a> of the same event rules '
    gx_line += '(<a href="#great_expectations">results below</a>).</p>'
    body = "\n".join(
        [
            f"<h1>CDC data quality, dt={escape(dt_value)} {_badge(overall)}</h1>",
            f"<p>Generated {escape(dt.datetime.now(dt.UTC).isoformat(timespec='seconds'))}.</p>",
            _table(["rule", "result", "checked", "failed"], rows),
            "" if gx_link is None else gx_line,
            _activity_section(activity),
            _event_section(event_counts),
            *[_rule_section(r) for r in results],
            _gx_section(gx, gx_link),
            _snapshot_section(snapshot),
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>CDC data quality dt={escape(dt_value)}</title><style>{_CSS}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


def summary(
    results: Sequence[RuleResult], dt_value: str, event_counts: Sequence[dict], gx: GxReport | None,
    gx_link: str | None, activity: Activity | None,
) -> dict[str, Any]:  # fmt: skip
    """The JSON summary: overall and per-rule outcome with every figure the HTML shows."""
    out = {
        "dt": dt_value,
        "passed": all(r.passed for r in results),
        "rules": {r.rule: r.to_dict() for r in results},
        "event_counts": list(event_counts),
    }
    if activity is not None:
        out["activity"] = activity.to_dict()
    if gx is not None:
        out["great_expectations"] = {
            "success": gx.success,
            "data_docs": gx_link,
            "data_docs_offline": gx.offline,
            "expectations": [asdict(o) for o in gx.outcomes],
        }
    return out


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def report_day(out_dir: str | Path, dt: str) -> Path:
    """`out_dir/dt=DT`, the folder of one partition's report (created)."""
    day = Path(out_dir) / f"dt={dt}"
    day.mkdir(parents=True, exist_ok=True)
    return day


def write_quality_report(
    results: Sequence[RuleResult],
    out_dir: str | Path,
    dt: str,
    event_counts: Sequence[dict] = (),
    gx: GxReport | None = None,
    activity: Activity | None = None,
    snapshot: dict | None = None,
) -> Path:
    """Write `out_dir/dt=DT/index.html` and `summary.json` beside it; the HTML path. A `snapshot`'s figures
    are on the page only: the snapshot's own `_runs/dt=.../summary.json` holds them."""
    day = report_day(out_dir, dt)
    link = os.path.relpath(gx.docs_index, day).replace(os.sep, "/") if gx is not None else None
    text = json.dumps(summary(results, dt, event_counts, gx, link, activity), indent=2, default=str) + "\n"
    _write_atomic(day / "summary.json", text)
    _write_atomic(day / "index.html", render_html(results, dt, event_counts, gx, link, activity, snapshot))
    return day / "index.html"
