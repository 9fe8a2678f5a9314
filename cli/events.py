"""``sapwood events``: the change feed from a running catalog, one line per
event (or the API's JSON), and ``--follow`` to wait for more;
``sapwood webhook add|list|remove|resume``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.options import UriOpt
from cli.output import (
    FullOpt,
    JsonOpt,
    echo,
    print_json,
    print_json_line,
    print_table,
    short_hash,
    short_instant,
)
from cli.versioning import client

# A long poll is answered within this (the server's upper bound is 60 s).
_WAIT_S = 30


def events(after: Annotated[int, typer.Option("--after", metavar="ID",
                                               help="Start after this event id")] = 0,
           follow: Annotated[bool, typer.Option("--follow", "-f",
                                                help="Wait for new events")] = False,
           types: Annotated[str | None, typer.Option(
               "--types", metavar="TYPES", help="Comma-separated CloudEvents types")] = None,
           ref: Annotated[str | None, typer.Option(
               "--ref", "-r", metavar="REF", help="Only this reference's events")] = None,
           full: bool = FullOpt,
           as_json: Annotated[bool, typer.Option(
               "--json", help="Print the API's answer as one JSON document; with "
                              "--follow, one CloudEvent per line")] = False,
           uri: str | None = UriOpt) -> None:
    """Print the change feed, oldest first.

    With --follow, keep waiting for more."""
    c = client(uri)
    params_after = after
    params: dict[str, Any] = {"maxRecords": 500}
    if types:
        params["types"] = types
    if ref:
        params["ref"] = ref
    found: list[dict[str, Any]] = []
    shown = 0
    while True:
        page = c.call("GET", "/api/v2/events",
                      params={**params, "after": after,
                              **({"wait": _WAIT_S} if follow else {})})
        for e in page["events"]:
            if as_json and not follow:
                found.append(e)  # one document, once every page is in
            elif as_json:
                print_json_line(e)
            else:
                echo(_line(e, full))
            shown += 1
            after = int(e["id"])
        # Past what the server looked at, shown or not (events this caller
        # may not read included): where the next page starts.
        after = int(page.get("after", after))
        if not page["hasMore"] and not follow:
            if as_json:
                print_json({**page, "events": found})
            elif not shown:
                echo("no events" + (f" on {ref}" if ref else "")
                     + (f" after event {params_after}" if params_after else ""))
            return


def _line(e: dict[str, Any], full: bool = False) -> str:
    data = e.get("data") or {}
    keys = sorted({".".join(op["key"]) for c in data.get("commits", [])
                   for op in c.get("operations", [])})
    head = short_hash(data.get("hashAfter"), full) or "(deleted)"
    shown = ", ".join(keys[:5]) + (f" (+{len(keys) - 5})" if len(keys) > 5 else "")
    when = short_instant(e["time"], full)
    return (f"{e['id']:>8} {when} {e['type'].removeprefix('dev.sapwood.'):<20} "
            f"{e['subject']} → {head}" + (f"  {shown}" if shown else ""))


webhook_app = typer.Typer(no_args_is_help=True,
                          help="Webhooks: the change feed pushed to a URL (docs/events.md).")


@webhook_app.command("add")
def webhook_add(url: str = typer.Argument(..., metavar="URL", show_default=False,
                                          help="Where the events are POSTed"),
                types: Annotated[str | None, typer.Option(
                    "--types", metavar="TYPES",
                    help="Only these CloudEvents types (comma-separated)")] = None,
                refs: Annotated[str | None, typer.Option(
                    "--refs", metavar="REFS",
                    help="Only these references (comma-separated)")] = None,
                keys: Annotated[str | None, typer.Option(
                    "--keys", metavar="KEYS",
                    help="Only these keys (comma-separated, dotted)")] = None,
                secret: Annotated[str | None, typer.Option(
                    "--secret", metavar="SECRET",
                    help="The HMAC secret (default: one is made and shown once)")] = None,
                as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """Register a webhook; prints its id and secret (shown this once)."""
    made = client(uri).call("POST", "/api/v2/webhooks", json={
        "url": url, "types": _split(types), "refs": _split(refs), "keys": _split(keys),
        **({"secret": secret} if secret else {})})
    if as_json:
        print_json(made)
        return
    echo(f"webhook {made['id']} → {made['url']}\nsecret: {made['secret']}")


@webhook_app.command("list")
def webhook_list(as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """The webhooks and how far their delivery got."""
    found = client(uri).call("GET", "/api/v2/webhooks")
    if as_json:
        print_json(found)
        return
    print_table(("id", "url", "state", "delivered", "last event", "failures", "last error"),
                ((h["id"], h["url"], h["state"], str(h["delivered"]), str(h["lastDelivered"]),
                  str(h["failures"]), h["lastError"] or "") for h in found["webhooks"]),
                empty="no webhooks", wrap=("last error",))


WebhookArg = typer.Argument(..., metavar="ID", show_default=False,
                            help="The webhook's id (webhook list shows it)")


@webhook_app.command("remove")
def webhook_remove(webhook_id: str = WebhookArg, uri: str | None = UriOpt) -> None:
    """Remove a webhook."""
    client(uri).call("DELETE", f"/api/v2/webhooks/{webhook_id}")
    echo(f"removed webhook {webhook_id}")


@webhook_app.command("resume")
def webhook_resume(webhook_id: str = WebhookArg, as_json: bool = JsonOpt,
                   uri: str | None = UriOpt) -> None:
    """Resume a paused webhook (delivery goes on from its last event)."""
    h = client(uri).call("POST", f"/api/v2/webhooks/{webhook_id}/resume")
    if as_json:
        print_json(h)
        return
    echo(f"webhook {h['id']} is {h['state']}")


def _split(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def register(app: typer.Typer) -> None:
    app.command()(events)
    app.add_typer(webhook_app, name="webhook")

