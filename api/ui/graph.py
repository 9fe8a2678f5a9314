"""A view's neighbourhood as a small SVG: what it reads on the left, one
column per depth, the view in the middle, what reads it on the right, one
column per depth. Each hop is its own line (``top ← big_regions ←
revenue``, never a shortcut from ``top`` to ``revenue``; where ``top``
reads ``revenue`` directly as well, that is a hop too and drawn), each box
in the column of its longest way from the view, so every line points
away from it; and each box says
its state as the API's one verdict gives it (``ok``, ``invalid``,
``unanalysed``; a table ``missing`` when gone); every box links to its page."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from urllib.parse import quote

_W, _H, _GAP, _HOP = 220, 28, 10, 48


@dataclass(frozen=True, slots=True)
class Node:
    """One object on the way: its key, least depth, the objects on the way
    it connects to one hop nearer the view (``vias``), and its state."""

    key: str
    depth: int
    vias: tuple[str, ...]
    state: str


def _columns(key: str, nodes: list[Node]) -> dict[str, int]:
    """Each node's longest number of hops from the view (``key``) along the
    hops the graph holds: a box to the right of everything that reads it.
    Bounded by the number of nodes (a cycle is drawn, not followed)."""
    far = {n.key: n.depth for n in nodes}
    for _ in range(len(nodes)):
        moved = False
        for n in nodes:
            d = max((far[v] + 1 for v in n.vias if v in far and v != n.key), default=1)
            if d > far[n.key] and d <= len(nodes):
                far[n.key], moved = d, True
        if not moved:
            break
    return far


def neighbourhood(ref: str, key: str, state: str, reads: list[Node],
                  read_by: list[Node]) -> str:
    far_up, far_down = _columns(key, reads), _columns(key, read_by)
    up = max(far_up.values(), default=0)
    down = max(far_down.values(), default=0)
    # Column of each box: the deepest read leftmost, the view, then readers.
    columns: dict[int, list[tuple[str, str, bool]]] = {up: [(key, state, False)]}
    where: dict[tuple[str, int], int] = {}
    for n in reads:
        columns.setdefault(up - far_up[n.key], []).append((n.key, n.state, True))
    for n in read_by:
        columns.setdefault(up + far_down[n.key], []).append((n.key, n.state, True))
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
             f'aria-label="{escape(key)}: reads {len(reads)}, read by {len(read_by)}">',
             # Each line's head at the reader: which way the data flows.
             '<defs><marker id="sw-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
             'markerHeight="7" orient="auto"><path class="arrow" d="M0,0L8,4L0,8z"/></marker>'
             '</defs>']

    def line(col_from: int, name_from: str, col_to: int, name_to: str) -> None:
        """From the right edge of a box to the left edge of a box further right."""
        if (name_from, col_from) not in where or (name_to, col_to) not in where \
                or col_to <= col_from:
            return  # not on this page's graph, or a cycle's way back
        y1 = where[(name_from, col_from)] + _H // 2
        y2 = where[(name_to, col_to)] + _H // 2
        x1 = col_from * (_W + _HOP) + _W
        x2 = col_to * (_W + _HOP)
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" '
                     f'data-from="{escape(name_from)}" data-to="{escape(name_to)}" '
                     'marker-end="url(#sw-arrow)"/>')

    def col_up(name: str) -> int:
        return up if name == key else up - far_up.get(name, 0)

    def col_down(name: str) -> int:
        return up if name == key else up + far_down.get(name, 0)

    for n in reads:
        for v in n.vias:
            line(col_up(n.key), n.key, col_up(v), v)
    for n in read_by:
        for v in n.vias:
            line(col_down(v), v, col_down(n.key), n.key)
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
