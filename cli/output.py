"""How the CLI prints (docs/cli.md): ``--json`` prints the API's answer as
one JSON document; the one place tables are printed, drawn on a terminal
(free text wrapping in its cell, never cut), else plain tab-separated
lines, with 12-character hashes and instants to the millisecond unless
``--full``, and a sentence instead of an empty table; every other line is
printed as it is (no wrapping, no markup)."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import typer

JsonOpt = typer.Option(False, "--json", help="Print the API's JSON answer (one document)")
FullOpt = typer.Option(False, "--full", help="Print whole hashes and instants (a table "
                                             "shows 12 hex characters and milliseconds)")
# A hash in a table: as many characters as every ref spec accepts as a
# prefix and the UI shows (api/ui/format.py).
SHORT_HASH = 12
# The narrowest a column of free text is drawn before the table gives way
# to plain lines.
_MIN_TEXT = 16
_INSTANT = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z")


def echo(line: str = "") -> None:
    typer.echo(line)


def print_json(doc: Any) -> None:
    """One JSON document (a script reads the whole output)."""
    typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))


def print_json_line(doc: Any) -> None:
    """One JSON object on one line (a stream: one line per item)."""
    typer.echo(json.dumps(doc, separators=(",", ":"), ensure_ascii=False))


def short_hash(value: str | None, full: bool = False) -> str:
    """A commit hash as a table shows it: its first 12 characters."""
    return (value or "") if full else (value or "")[:SHORT_HASH]


def short_instant(value: str | None, full: bool = False) -> str:
    """An instant as a table shows it: to the millisecond, as the UI does
    (``2026-11-25T09:00:00.123Z``); anything else as it is."""
    m = None if full or not value else _INSTANT.fullmatch(value)
    if m is None:
        return value or ""
    return f"{m[1]}.{(m[2] or '').ljust(3, '0')[:3]}Z"


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 view``, ``2 views``, ``0 views``."""
    return f"{n} {word if n == 1 else words or word + 's'}"


def print_table(columns: Sequence[str], rows: Iterable[Sequence[str]], *,
                empty: str | None = None, wrap: Collection[str] = ()) -> None:
    """A table with every value whole, or ``empty`` (a sentence: "no views
    on main") when it has no row. On a terminal it is drawn with rich, the
    ``wrap`` columns (free text: messages, reasons) wrapping inside their
    cells, the others on one line; where even that does not fit, and
    whenever the output is not a terminal, it is a header line and one line
    per row, tab-separated (a value's own line breaks become spaces, and its
    tabs everywhere)."""
    from rich.console import Console

    body = [[str(c).replace("\t", " ") for c in row] for row in rows]
    if not body and empty is not None:
        typer.echo(empty)
        return
    console = Console(highlight=False)
    if console.is_terminal and _drawn_width(columns, body, wrap) <= console.width:
        from rich.table import Table
        from rich.text import Text

        table = Table(*columns)
        for column in table.columns:
            column.overflow = "fold"  # never an ellipsis: a long word folds
            column.no_wrap = column.header not in wrap
        for row in body:
            table.add_row(*(Text(c) for c in row))  # values are not markup
        console.print(table)
        return
    for row in [list(columns), *body]:
        typer.echo("\t".join(_flat(c) for c in row))


def _drawn_width(columns: Sequence[str], rows: list[list[str]],
                 wrap: Collection[str] = ()) -> int:
    """The narrowest the table can be drawn: rich's box (one space of
    padding each side of a column, one rule between columns and at each
    edge) around whole values, a ``wrap`` column at most _MIN_TEXT wide."""
    from rich.cells import cell_len

    widths = [max(cell_len(line) for line in c.splitlines() or [""]) for c in columns]
    for row in rows:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], *(cell_len(line) for line in c.splitlines() or [""]))
    widths = [min(w, _MIN_TEXT) if c in wrap else w for c, w in zip(columns, widths, strict=True)]
    return sum(widths) + 3 * len(widths) + 1


def _flat(value: str) -> str:
    return " ".join(value.splitlines())


def merged_pages(pages: Iterable[dict[str, Any]], items: str) -> dict[str, Any]:
    """A paged listing as one answer of the API's shape: the last page's
    fields with every page's items (so ``hasMore`` is false)."""
    found: list[Any] = []
    last: dict[str, Any] = {}
    for page in pages:
        found += page[items]
        last = page
    return {**last, items: found}


def progress(label: str) -> Callable[[str, int], None]:
    """One line on stderr, rewritten in place at most twice a second:
    ``label: stage: count`` (fsck's and an import's progress)."""
    last = [0.0]

    def show(stage: str, done: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.5:
            last[0] = now
            sys.stderr.write(f"\r{label}: {stage}: {done:,}\x1b[K")
            sys.stderr.flush()

    return show
