"""How the CLI prints (docs/cli.md): ``--json`` prints the API's answer as
one JSON document; a table is drawn only on a terminal wide enough for its
full values, else it is plain tab-separated lines; every other line is
printed as it is (no wrapping, no markup)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import typer

JsonOpt = typer.Option(False, "--json", help="Print the API's JSON answer (one document)")


def echo(line: str = "") -> None:
    typer.echo(line)


def print_json(doc: Any) -> None:
    """One JSON document (a script reads the whole output)."""
    typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))


def print_json_line(doc: Any) -> None:
    """One JSON object on one line (a stream: one line per item)."""
    typer.echo(json.dumps(doc, separators=(",", ":"), ensure_ascii=False))


def print_table(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """A table with every value whole: drawn with rich on a terminal whose
    width holds the widest row, otherwise a header line and one line per row,
    tab-separated (a value's own line breaks become spaces, and its tabs
    everywhere)."""
    from rich.console import Console

    body = [[str(c).replace("\t", " ") for c in row] for row in rows]
    console = Console(highlight=False)
    if console.is_terminal and _drawn_width(columns, body) <= console.width:
        from rich.table import Table
        from rich.text import Text

        table = Table(*columns)
        for column in table.columns:
            column.overflow = "fold"  # never an ellipsis, should the width change
        for row in body:
            table.add_row(*(Text(c) for c in row))  # values are not markup
        console.print(table)
        return
    for row in [list(columns), *body]:
        typer.echo("\t".join(_flat(c) for c in row))


def _drawn_width(columns: Sequence[str], rows: list[list[str]]) -> int:
    """rich's box: one space of padding each side of a column, one rule
    between columns and at each edge."""
    from rich.cells import cell_len

    widths = [max(cell_len(line) for line in c.splitlines() or [""]) for c in columns]
    for row in rows:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], *(cell_len(line) for line in c.splitlines() or [""]))
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
