"""A view's neighbourhood as a small SVG: what it reads on the left, the view
in the middle, what reads it on the right; every box links to its page."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

_W, _H, _GAP = 220, 28, 10


def neighbourhood(ref: str, key: str, reads: list[str], read_by: list[str]) -> str:
    rows = max(len(reads), len(read_by), 1)
    height = rows * (_H + _GAP) + _GAP
    mid_y = (height - _H) // 2
    parts = [f'<svg class="graph" role="img" viewBox="0 0 {3 * _W + 120} {height}" '
             f'aria-label="{escape(key)}: reads {len(reads)}, read by {len(read_by)}">']

    def box(x: int, y: int, label: str, link: bool) -> None:
        inner = (f'<rect x="{x}" y="{y}" width="{_W}" height="{_H}" rx="4"/>'
                 f'<text x="{x + 8}" y="{y + 18}">{escape(label)}</text>')
        if link:
            href = f"/ui/object/{quote(ref, safe='@*~^:')}/{quote(label, safe='')}"
            parts.append(f'<a href="{escape(href)}">{inner}</a>')
        else:
            parts.append(f'<g class="self">{inner}</g>')

    for i, name in enumerate(reads):
        y = _GAP + i * (_H + _GAP)
        parts.append(f'<line x1="{_W}" y1="{y + _H // 2}" x2="{_W + 60}" '
                     f'y2="{mid_y + _H // 2}"/>')
        box(0, y, name, True)
    box(_W + 60, mid_y, key, False)
    for i, name in enumerate(read_by):
        y = _GAP + i * (_H + _GAP)
        parts.append(f'<line x1="{2 * _W + 60}" y1="{mid_y + _H // 2}" x2="{2 * _W + 120}" '
                     f'y2="{y + _H // 2}"/>')
        box(2 * _W + 120, y, name, True)
    parts.append("</svg>")
    return "".join(parts)
