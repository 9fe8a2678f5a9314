"""A view's neighbourhood as a small SVG: what it reads on the left, one
column per depth, the view in the middle, what reads it on the right, one
column per depth. Each hop is its own line (``top ← big_regions ←
revenue``, never a shortcut from ``top`` to ``revenue``), and each box says
its state as the API's one verdict gives it (``ok``, ``invalid``,
``unanalysed``; a table ``missing`` when gone); every box links to its page."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from urllib.parse import quote

_W, _H, _GAP, _HOP = 220, 28, 10, 48


@dataclass(frozen=True, slots=True)
class Node:
    """One object on the way: its key, depth, the object it connects to one
    hop nearer the view (``via``), and its state."""

    key: str
    depth: int
    via: str
    state: str


def neighbourhood(ref: str, key: str, state: str, reads: list[Node],
                  read_by: list[Node]) -> str:
    up = max((n.depth for n in reads), default=0)
    down = max((n.depth for n in read_by), default=0)
    # Column of each box: the deepest read leftmost, the view, then readers.
    columns: dict[int, list[tuple[str, str, bool]]] = {up: [(key, state, False)]}
    where: dict[tuple[str, int], int] = {}
    for n in reads:
        columns.setdefault(up - n.depth, []).append((n.key, n.state, True))
    for n in read_by:
        columns.setdefault(up + n.depth, []).append((n.key, n.state, True))
    rows = max(len(c) for c in columns.values())
    height = rows * (_H + _GAP) + _GAP

    def y_of(col: int, i: int) -> int:
        # Each column centred on the view's row.
        return (height - len(columns[col]) * (_H + _GAP) + _GAP) // 2 + i * (_H + _GAP)

    for col, boxes in columns.items():
        for i, (name, _, _) in enumerate(boxes):
            where[(name, col)] = y_of(col, i)
    width = (up + down + 1) * (_W + _HOP) - _HOP
    # Its own size in pixels: narrowed to fit a small window, never
    # enlarged (a view alone would otherwise fill the page with one box).
    parts = [f'<svg class="graph" role="img" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" '
             f'aria-label="{escape(key)}: reads {len(reads)}, read by {len(read_by)}">']

    def line(col_from: int, name_from: str, col_to: int, name_to: str) -> None:
        """From the right edge of a box to the left edge of the next column's."""
        if (name_from, col_from) not in where or (name_to, col_to) not in where:
            return  # not on this page's graph (the answers give each key once)
        y1 = where[(name_from, col_from)] + _H // 2
        y2 = where[(name_to, col_to)] + _H // 2
        x1 = col_from * (_W + _HOP) + _W
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x1 + _HOP}" y2="{y2}"/>')

    for n in reads:
        line(up - n.depth, n.key, up - n.depth + 1, n.via)
    for n in read_by:
        line(up + n.depth - 1, n.via, up + n.depth, n.key)
    for col, boxes in sorted(columns.items()):
        for name, st, link in boxes:
            x, y = col * (_W + _HOP), where[(name, col)]
            inner = (f'<title>{escape(name)}: {escape(st)}</title>'
                     f'<rect x="{x}" y="{y}" width="{_W}" height="{_H}" rx="4"/>'
                     f'<text x="{x + 8}" y="{y + 18}">{escape(name)}</text>')
            if link:
                href = f"/ui/object/{quote(ref, safe='@*~^:')}/{quote(name, safe='')}"
                parts.append(f'<a class="node {escape(st)}" data-key="{escape(name)}" '
                             f'href="{escape(href)}">{inner}</a>')
            else:
                parts.append(f'<g class="self node {escape(st)}" data-key="{escape(name)}">'
                             f'{inner}</g>')
    parts.append("</svg>")
    return "".join(parts)
