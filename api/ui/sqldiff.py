"""Two view versions side by side: per dialect, the SQL of each in a column,
line by line, the changed words marked (<del> on the left, <ins> on the
right). Long lines wrap in the page (CSS), so the table fits its width."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from html import escape
from typing import Any

_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class VersionDiff:
    a: int
    b: int
    identical: bool  # the same SQL in every dialect and the same default namespace
    html: str  # the tables of the dialects whose SQL differs, and what else differs


def compare(versions: list[dict[str, Any]], a: int, b: int) -> VersionDiff | None:
    """Version ``a`` against version ``b`` of a view's history (None: either
    is not in it)."""
    by_id = {v["versionId"]: v for v in versions}
    if a not in by_id or b not in by_id:
        return None
    left, right = by_id[a], by_id[b]
    out = []
    ns_a, ns_b = left.get("defaultNamespace") or [], right.get("defaultNamespace") or []
    if ns_a != ns_b:
        out.append(f'<p class="ns">Default namespace: <code>{escape(".".join(ns_a))}</code> → '
                   f'<code>{escape(".".join(ns_b))}</code></p>')
    sql_a, sql_b = left["representations"], right["representations"]
    for dialect in sorted(set(sql_a) | set(sql_b)):
        before, after = sql_a.get(dialect), sql_b.get(dialect)
        if before == after:
            continue
        out.append(f"<h3>{escape(dialect)}</h3>" + _table(before, after, a, b))
    return VersionDiff(a, b, not out, "".join(out))


def _table(before: str | None, after: str | None, a: int, b: int) -> str:
    old, new = (before or "").splitlines(), (after or "").splitlines()
    rows = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            rows += [_row("same", i + 1, escape(old[i]), j + 1, escape(new[j]))
                     for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            lo = old[i] if i < i2 else None
            hi = new[j] if j < j2 else None
            if lo is not None and hi is not None:
                left, right = _words(lo, hi)
                rows.append(_row("changed", i + 1, left, j + 1, right))
            elif lo is not None:
                rows.append(_row("removed", i + 1, f"<del>{escape(lo)}</del>", None, ""))
            else:
                rows.append(_row("added", None, "", j + 1, f"<ins>{escape(hi or '')}</ins>"))
    missing = [v for v, sql in ((a, before), (b, after)) if sql is None]
    caption = (f"<caption>version {missing[0]} has no SQL in this dialect</caption>"
               if missing else "")
    return (f'<table class="sbs">{caption}'
            '<colgroup><col class="no"><col><col class="no"><col></colgroup>'
            f'<thead><tr><th colspan="2">version {a}</th><th colspan="2">version {b}</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _row(kind: str, i: int | None, left: str, j: int | None, right: str) -> str:
    return (f'<tr class="{kind}"><td class="no">{i or ""}</td><td class="sql">{left}</td>'
            f'<td class="no">{j or ""}</td><td class="sql">{right}</td></tr>')


def _words(old: str, new: str) -> tuple[str, str]:
    """A changed line pair with the changed words marked."""
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    left, right = [], []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        x, y = escape("".join(a[i1:i2])), escape("".join(b[j1:j2]))
        if op == "equal":
            left.append(x)
            right.append(y)
            continue
        if x:
            left.append(f"<del>{x}</del>")
        if y:
            right.append(f"<ins>{y}</ins>")
    return "".join(left), "".join(right)
