"""``sapwood events``: the change feed from a running catalog, one line per
event (or its CloudEvents JSON), and ``--follow`` to wait for more."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console

from cli.versioning import UriOpt, client

console = Console(highlight=False)
# A long poll is answered within this (the server's upper bound is 60 s).
_WAIT_S = 30


def events(after: Annotated[int, typer.Option("--after", help="Start after this event id")] = 0,
           follow: Annotated[bool, typer.Option("--follow", "-f",
                                                help="Wait for new events")] = False,
           types: Annotated[str | None, typer.Option(
               "--types", help="Comma-separated CloudEvents types")] = None,
           ref: Annotated[str | None, typer.Option("--ref", help="Only this reference")] = None,
           as_json: Annotated[bool, typer.Option("--json",
                                                 help="One CloudEvent per line")] = False,
           uri: str | None = UriOpt) -> None:
    """Print the change feed from AFTER; with --follow, keep waiting for more."""
    c = client(uri)
    params: dict[str, Any] = {"maxRecords": 500}
    if types:
        params["types"] = types
    if ref:
        params["ref"] = ref
    while True:
        page = c.call("GET", "/api/v2/events",
                      params={**params, "after": after,
                              **({"wait": _WAIT_S} if follow else {})})
        for e in page["events"]:
            console.print(json.dumps(e, separators=(",", ":")) if as_json else _line(e),
                          soft_wrap=True)
            after = int(e["id"])
        if not page["hasMore"] and not follow:
            return


def _line(e: dict[str, Any]) -> str:
    data = e.get("data") or {}
    keys = sorted({".".join(op["key"]) for c in data.get("commits", [])
                   for op in c.get("operations", [])})
    head = (data.get("hashAfter") or "")[:12] or "(deleted)"
    shown = ", ".join(keys[:5]) + (f" (+{len(keys) - 5})" if len(keys) > 5 else "")
    return (f"{e['id']:>8} {e['time']} {e['type'].removeprefix('dev.sapwood.'):<20} "
            f"{e['subject']} → {head}" + (f"  {shown}" if shown else ""))


def register(app: typer.Typer) -> None:
    app.command()(events)
