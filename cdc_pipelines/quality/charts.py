"""The report's pictures as inline SVG strings: no plotting library, no script, nothing fetched.

One small panel per topic (hourly events stacked by op; lag histogram with its quantiles), so a topic
that stands out is seen at a glance: its panel gets a red frame and says why. Every text drawn from the
data is escaped.
"""

from __future__ import annotations

from html import escape

from cdc_pipelines.quality.activity import Activity, TopicLag

OP_COLOURS = {
    "INSERT": "#4c78a8",
    "UPDATE": "#f58518",
    "DELETE": "#e45756",
    "UPSERT": "#54a24b",
    "DDL": "#72b7b2",
    "TRUNCATE": "#ff9da6",
    "HEARTBEAT": "#bab0ac",
    "TX_BEGIN": "#9d755d",
    "TX_END": "#9d755d",
    "OTHER": "#eeca3b",
}
LAG_COLOUR = "#6f4e9c"
FLAG_COLOUR = "#bb2222"
FLAG_FILL = "#fdeaea"
WIDTH, HEIGHT = 420, 170
LEFT, TOP, BOTTOM = 40, 42, 26
PLOT = HEIGHT - BOTTOM - TOP  # the bars' greatest height


def _frame(title: str, flagged: bool, subtitle: str, body: str, alert: bool = False) -> str:
    """A panel: title, one line under it (red when `alert`), red frame and tint when the topic is flagged."""
    border = f'stroke="{FLAG_COLOUR}" stroke-width="3"' if flagged else 'stroke="#ccc" stroke-width="1"'
    colour = FLAG_COLOUR if alert else "#222"
    return (
        f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" role="img">'
        f"<title>{escape(title)}</title>"
        f'<rect x="1" y="1" width="{WIDTH - 2}" height="{HEIGHT - 2}" fill="{FLAG_FILL if flagged else "#fff"}" '
        f"{border}/>"
        f'<text x="8" y="17" font-size="13" font-weight="600">{escape(title)}</text>'
        f'<text x="8" y="31" font-size="11" fill="{colour}">{escape(subtitle)}</text>{body}</svg>'
    )


def _axis(label: str) -> str:
    base = HEIGHT - BOTTOM
    return (
        f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - 8}" y2="{base}" stroke="#888"/>'
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="#888"/>'
        f'<text x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end" font-size="10">{escape(label)}</text>'
        f'<text x="{LEFT - 4}" y="{base}" text-anchor="end" font-size="10">0</text>'
    )


def hourly_chart(topic: str, hours: dict[int, dict[str, int]], flags: list[str] = ()) -> str:
    """24 bars, one per UTC hour, stacked by op; hours without events are shaded when the topic is flagged."""
    peak = max((sum(ops.values()) for ops in hours.values()), default=0) or 1
    slot = (WIDTH - 8 - LEFT) / 24
    parts = [_axis(str(peak))]
    for h in range(24):
        x = LEFT + h * slot
        ops = hours.get(h, {})
        if flags and not sum(ops.values()):
            parts.append(
                f'<rect x="{x:.1f}" y="{TOP}" width="{slot:.1f}" height="{PLOT}" fill="{FLAG_COLOUR}" '
                'fill-opacity="0.15"/>'
            )
        y = HEIGHT - BOTTOM
        for op in sorted(ops, key=lambda o: list(OP_COLOURS).index(o) if o in OP_COLOURS else 99):
            height = PLOT * ops[op] / peak
            y -= height
            colour = OP_COLOURS.get(op, "#999")
            parts.append(
                f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{slot - 2:.1f}" height="{height:.1f}" '
                f'fill="{colour}"><title>{h:02d}h {escape(op)}: {ops[op]}</title></rect>'
            )
        if h % 3 == 0:
            parts.append(f'<text x="{x:.1f}" y="{HEIGHT - 10}" font-size="10">{h:02d}</text>')
    quiet = [f for f in flags if f.startswith("no events")]
    total = sum(sum(ops.values()) for ops in hours.values())
    subtitle = "; ".join(quiet) or f"{total} events"
    return _frame(f"{topic}: events per hour (UTC)", bool(flags), subtitle, "".join(parts), alert=bool(quiet))


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) < 1:
        return f"{value * 1000:.0f} ms"
    return f"{value:.1f} s" if abs(value) < 3600 else f"{value / 3600:.1f} h"


def lag_chart(topic: str, lag: TopicLag, flags: list[str] = ()) -> str:
    """Histogram of the topic's lag by decade (`<=0`, then 1e-4 s up), with p50 / p95 / p99 / max."""
    buckets = list(lag.histogram.items())
    peak = max((n for _, n in buckets), default=0) or 1
    slot = (WIDTH - 8 - LEFT) / max(len(buckets), 1)
    parts = [_axis(str(peak))]
    figures = f"p50 {_seconds(lag.p50)}  p95 {_seconds(lag.p95)}  p99 {_seconds(lag.p99)}  max {_seconds(lag.max)}"
    jump = [f for f in flags if f.startswith("lag jumps")]
    for i, (label, n) in enumerate(buckets):
        x = LEFT + i * slot
        height = max(PLOT * n / peak, 2.0) if n else 0.0  # a handful of events stays visible
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{HEIGHT - BOTTOM - height:.1f}" width="{slot - 4:.1f}" '
            f'height="{height:.1f}" fill="{LAG_COLOUR}"><title>{escape(label)}: {n}</title></rect>'
        )
        parts.append(f'<text x="{x + 2:.1f}" y="{HEIGHT - 10}" font-size="9">{escape(label)}</text>')
    subtitle = figures + ("  (jumps)" if jump else "")
    return _frame(f"{topic}: replication lag", bool(flags), subtitle, "".join(parts), alert=bool(jump))


def legend() -> str:
    """The op colours, as one line of SVG."""
    items = [
        f'<rect x="{4 + i * 92}" y="4" width="12" height="12" fill="{colour}"/>'
        f'<text x="{20 + i * 92}" y="15" font-size="11">{op}</text>'
        for i, (op, colour) in enumerate(OP_COLOURS.items())
    ]
    return f'<svg width="{len(OP_COLOURS) * 92}" height="20" font-family="sans-serif" role="img">{"".join(items)}</svg>'


def activity_charts(activity: Activity) -> list[tuple[str, str, str | None]]:
    """(topic, hourly chart, lag chart or None) per topic, flagged topics first."""
    topics = sorted(set(activity.hourly) | set(activity.lag), key=lambda t: (t not in activity.flags, t))
    out = []
    for topic in topics:
        flags, lag = activity.flags.get(topic, []), activity.lag.get(topic)
        hourly = hourly_chart(topic, activity.hourly.get(topic, {}), flags)
        out.append((topic, hourly, lag_chart(topic, lag, flags) if lag else None))
    return out
