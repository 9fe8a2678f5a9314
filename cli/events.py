"""``sapwood events``: the change feed from a running catalog, one line per
event (or its CloudEvents JSON), and ``--follow`` to wait for more;
``sapwood webhook add|list|remove|resume``."""

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


webhook_app = typer.Typer(no_args_is_help=True,
                          help="Webhooks: the change feed pushed to a URL (docs/events.md)")


@webhook_app.command("add")
def webhook_add(url: str,
                types: Annotated[str | None, typer.Option(
                    "--types", help="Comma-separated CloudEvents types")] = None,
                refs: Annotated[str | None, typer.Option(
                    "--refs", help="Comma-separated references")] = None,
                keys: Annotated[str | None, typer.Option(
                    "--keys", help="Comma-separated dotted keys")] = None,
                secret: Annotated[str | None, typer.Option(
                    "--secret", help="The HMAC secret (default: one is made and shown once)")]
                = None,
                uri: str | None = UriOpt) -> None:
    """Register a webhook; prints its id and secret (shown this once)."""
    made = client(uri).call("POST", "/api/v2/webhooks", json={
        "url": url, "types": _split(types), "refs": _split(refs), "keys": _split(keys),
        **({"secret": secret} if secret else {})})
    console.print(f"webhook {made['id']} → {made['url']}\nsecret: {made['secret']}")


@webhook_app.command("list")
def webhook_list(uri: str | None = UriOpt) -> None:
    """The webhooks and how far their delivery got."""
    from rich.table import Table

    t = Table("id", "url", "state", "delivered", "last event", "failures", "last error")
    for h in client(uri).call("GET", "/api/v2/webhooks")["webhooks"]:
        t.add_row(h["id"], h["url"], h["state"], str(h["delivered"]), str(h["lastDelivered"]),
                  str(h["failures"]), (h["lastError"] or "")[:60])
    console.print(t)


@webhook_app.command("remove")
def webhook_remove(webhook_id: str, uri: str | None = UriOpt) -> None:
    """Remove a webhook."""
    client(uri).call("DELETE", f"/api/v2/webhooks/{webhook_id}")
    console.print(f"removed webhook {webhook_id}")


@webhook_app.command("resume")
def webhook_resume(webhook_id: str, uri: str | None = UriOpt) -> None:
    """Resume a paused webhook (delivery goes on from its last event)."""
    h = client(uri).call("POST", f"/api/v2/webhooks/{webhook_id}/resume")
    console.print(f"webhook {h['id']} is {h['state']}")


def _split(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def register(app: typer.Typer) -> None:
    app.command()(events)
    app.add_typer(webhook_app, name="webhook")

