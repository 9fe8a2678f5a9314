"""A table's row count over its snapshots as a small SVG line, drawn here
(no script, no library, nothing fetched): oldest snapshot on the left, one
dot per snapshot whose summary gives ``total-records``, each dot titled with
its snapshot, instant and count; the axes say 0 and the largest count, and
the first and last snapshot's instant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

_W, _H = 560, 150  # the drawing; the page scales it to its width
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 12, 12, 28
# The newest snapshots drawn (the table below lists them all).
MAX_POINTS = 1000


@dataclass(frozen=True, slots=True)
class Point:
    snapshot: int
    ms: int
    rows: int


def points(snapshots: list[dict[str, object]]) -> list[Point]:
    """Oldest first, from the metadata's snapshots: those whose summary has a
    whole ``total-records`` (a summary is strings; anything else is skipped)."""
    out = []
    for s in snapshots:
        summary = s.get("summary")
        total = summary.get("total-records") if isinstance(summary, dict) else None
        snapshot, ms = s.get("snapshot-id"), s.get("timestamp-ms")
        if (isinstance(total, str) and total.isascii() and total.isdigit()
                and isinstance(snapshot, int) and isinstance(ms, int)):
            out.append(Point(snapshot, ms, int(total)))
    out.sort(key=lambda p: p.ms)
    return out[-MAX_POINTS:]


def _instant(ms: int) -> str:
    try:
        at = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def rows_chart(pts: list[Point]) -> str:
    """The SVG ("" when no snapshot gives a count)."""
    if not pts:
        return ""
    top = max(p.rows for p in pts) or 1
    inner_w, inner_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    step = inner_w / (len(pts) - 1) if len(pts) > 1 else 0.0

    def xy(i: int, p: Point) -> tuple[float, float]:
        x = _LEFT + (i * step if len(pts) > 1 else inner_w / 2)
        return round(x, 1), round(_TOP + inner_h - p.rows / top * inner_h, 1)

    coords = [xy(i, p) for i, p in enumerate(pts)]
    first, last = pts[0], pts[-1]
    label = (f"Rows over {len(pts)} snapshot{'s' if len(pts) != 1 else ''}: "
             f"{first.rows:,} at the first, {last.rows:,} at the last, {top:,} at most")
    base_y = _TOP + inner_h
    parts = [f'<svg class="chart" id="rows-chart" role="img" viewBox="0 0 {_W} {_H}" '
             f'width="{_W}" height="{_H}" '
             f'aria-label="{escape(label)}">',
             f"<title>{escape(label)}</title>",
             f'<line class="axis" x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{base_y}"/>',
             f'<line class="axis" x1="{_LEFT}" y1="{base_y}" x2="{_W - _RIGHT}" y2="{base_y}"/>',
             f'<text class="y" x="{_LEFT - 6}" y="{_TOP + 4}">{top:,}</text>',
             f'<text class="y" x="{_LEFT - 6}" y="{base_y + 4}">0</text>',
             f'<text class="x first" x="{_LEFT}" y="{_H - 8}">{_instant(first.ms)}</text>']
    if len(pts) > 1:
        parts.append(f'<text class="x last" x="{_W - _RIGHT}" y="{_H - 8}">'
                     f'{_instant(last.ms)}</text>')
        parts.append('<polyline points="' + " ".join(f"{x},{y}" for x, y in coords) + '"/>')
    for (x, y), p in zip(coords, pts, strict=True):
        parts.append(f'<circle cx="{x}" cy="{y}" r="3" data-rows="{p.rows}">'
                     f"<title>snapshot {p.snapshot} · {_instant(p.ms)} · "
                     f"{p.rows:,} rows</title></circle>")
    parts.append("</svg>")
    return "".join(parts)
