"""The versioning verbs of the ``sapwood`` CLI: branches, tags, log, diff,
merge, transplant, show and the view audit, all over HTTP."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from cli.client import DEFAULT_URI, CatalogClient, ref_path
from core.keys import ContentKey

console = Console(highlight=False)
UriOpt = typer.Option(None, "--uri", help="Catalog URL (default: SAPWOOD_URI, else "
                                          f"{DEFAULT_URI})")


def client(uri: str | None) -> CatalogClient:
    return CatalogClient(uri or os.environ.get("SAPWOOD_URI") or DEFAULT_URI)


def _refs_app(kind: str) -> typer.Typer:
    app = typer.Typer(no_args_is_help=True, help=f"List, create, delete and move {kind}es"
                      if kind == "branch" else "List, create, delete and move tags")
    type_ = kind.upper()

    @app.command("list")
    def list_(uri: str | None = UriOpt) -> None:
        """List them with their heads."""
        t = Table("name", "hash")
        for r in client(uri).references():
            if r["type"] == type_:
                t.add_row(r["name"], r["hash"][:12])
        console.print(t)

    @app.command()
    def create(name: str, source: str = typer.Option("main", "--from", help="Source ref"),
               uri: str | None = UriOpt) -> None:
        """Create NAME at the head of a source reference (or any ref spec)."""
        c = client(uri)
        src = c.reference(source)
        body = {"type": src["type"], "name": src["name"], "hash": src["hash"]}
        new = c.call("POST", "/api/v2/trees", params={"name": name, "type": type_},
                     json=body)["reference"]
        console.print(f"created {kind} {new['name']} at {new['hash'][:12]}")

    @app.command()
    def delete(name: str, uri: str | None = UriOpt) -> None:
        """Delete NAME (at its current head)."""
        c = client(uri)
        head = c.reference(name)["hash"]
        c.call("DELETE", f"/api/v2/trees/{ref_path(name)}@{head}", params={"type": type_})
        console.print(f"deleted {kind} {name} (was at {head[:12]})")

    @app.command()
    def assign(name: str, target: str, uri: str | None = UriOpt) -> None:
        """Point NAME at TARGET (a ref or a ref spec)."""
        c = client(uri)
        head = c.reference(name)["hash"]
        to = c.reference(target)["hash"]
        c.call("PUT", f"/api/v2/trees/{ref_path(name)}@{head}", params={"type": type_},
               json={"type": "DETACHED", "hash": to})
        console.print(f"{kind} {name}: {head[:12]} -> {to[:12]}")

    return app


def log(ref: str = typer.Argument("main"), key: str | None = typer.Option(None, "--key"),
        author: str | None = typer.Option(None, "--author"),
        since: str | None = typer.Option(None, "--since", help="an instant (ISO 8601)"),
        until: str | None = typer.Option(None, "--until", help="an instant (ISO 8601)"),
        limit: int = typer.Option(20, "--limit", min=1), uri: str | None = UriOpt) -> None:
    """Commits on REF (first parents), newest first; the filters answer from
    the catalog's change index, however long the history."""
    params: dict[str, Any] = {"maxRecords": limit}
    if key:
        params["key"] = ContentKey.parse(key).to_path_string()
    params.update({k: v for k, v in (("author", author), ("since", since), ("until", until))
                   if v is not None})
    entries = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/history",
                               params=params)["logEntries"]
    t = Table("hash", "time", "author", "message")
    for e in entries[:limit]:
        m = e["commitMeta"]
        t.add_row(m["hash"][:12], m["commitTime"], ", ".join(m["authors"]), m["message"])
    console.print(t)


def diff(from_ref: str, to_ref: str, uri: str | None = UriOpt) -> None:
    """Keys that differ between two refs: + added, - removed, ~ changed."""
    c = client(uri)
    token = None
    while True:
        page = c.call("GET", f"/api/v2/trees/{ref_path(from_ref)}/diff/{ref_path(to_ref)}",
                      params={"pageToken": token} if token else {})
        for d in page["diffs"]:
            mark = "+" if d["from"] is None else "-" if d["to"] is None else "~"
            kind = (d["to"] or d["from"])["type"]
            console.print(f"{mark} {'.'.join(d['key']['elements'])}  ({kind})")
        token = page.get("token")
        if not page.get("hasMore"):
            return


def _modes(force: list[str], drop: list[str]) -> list[dict[str, Any]]:
    return [{"key": {"elements": list(ContentKey.parse(k).elements)}, "mergeBehavior": m}
            for keys, m in ((force, "FORCE"), (drop, "DROP")) for k in keys]


def _report(result: dict[str, Any], verb: str, dry_run: bool = False) -> None:
    for d in result["details"]:
        extra = f"  {d['conflict']['message']}" if d.get("conflict") else ""
        console.print(f"{d.get('outcome', ''):9} {'.'.join(d['key']['elements'])}{extra}")
    if result["wasApplied"]:
        console.print(f"{verb}: {result['targetBranch']} is now at "
                      f"{result['resultantTargetHash'][:12]}")
    elif dry_run:
        console.print(f"{verb}: nothing written (dry run)")
    else:
        console.print(f"{verb}: nothing to {verb}; {result['targetBranch']} stays at "
                      f"{result['resultantTargetHash'][:12]}")


def merge(source: str, into: str = typer.Option(..., "--into", help="Target branch"),
          dry_run: bool = typer.Option(False, "--dry-run"),
          force: Annotated[list[str] | None,
                           typer.Option("--force", help="Take the source's change")] = None,
          drop: Annotated[list[str] | None,
                          typer.Option("--drop", help="Keep the target's value")] = None,
          uri: str | None = UriOpt) -> None:
    """Merge SOURCE into a branch, three-way per key."""
    c = client(uri)
    head = c.reference(into)["hash"]
    result = c.call("POST", f"/api/v2/trees/{ref_path(into)}@{head}/history/merge",
                    json={"fromRefName": source, "dryRun": dry_run,
                          "keyMergeModes": _modes(force or [], drop or [])})
    _report(result, "merge", dry_run)


def transplant(hashes: list[str], onto: str = typer.Option(..., "--onto"),
               uri: str | None = UriOpt) -> None:
    """Replay commits (oldest first) onto a branch, all or nothing."""
    c = client(uri)
    head = c.reference(onto)["hash"]
    result = c.call("POST", f"/api/v2/trees/{ref_path(onto)}@{head}/history/transplant",
                    json={"hashesToTransplant": hashes})
    _report(result, "transplant")


def show(key: str, ref: str = typer.Option("main", "--ref"),
         at: str | None = typer.Option(None, "--at", help="An instant (ISO-8601 or ms)"),
         uri: str | None = UriOpt) -> None:
    """A view's SQL, or a table's current snapshot and schema, at a ref (and instant)."""
    c = client(uri)
    spec = f"{ref}*{at}" if at else ref
    k = ContentKey.parse(key)
    kind = c.content(spec, k)["content"]["type"]
    if kind in ("ICEBERG_VIEW", "MATERIALIZED_VIEW"):
        meta = c.iceberg(spec, "views", k)["metadata"]
        cur = next(v for v in meta["versions"] if v["version-id"] == meta["current-version-id"])
        console.print(f"view {key} at {spec}: version {cur['version-id']}")
        for r in cur["representations"]:
            console.print(f"-- {r['dialect']}\n{r['sql']}")
    elif kind == "ICEBERG_TABLE":
        meta = c.iceberg(spec, "tables", k)["metadata"]
        snap = meta.get("current-snapshot-id")
        console.print(f"table {key} at {spec}: snapshot {snap if snap is not None else 'none'}")
        schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
        for f in schema["fields"]:
            ftype = f["type"] if isinstance(f["type"], str) else f["type"].get("type")
            console.print(f"  {f['id']:>3} {f['name']}: {ftype}")
    else:
        console.print(f"{key} at {spec} is a {kind}")


view_app = typer.Typer(no_args_is_help=True, help="Views: the audit of their versions")


@view_app.command("history")
def view_history(key: str, ref: str = typer.Option("main", "--ref"),
                 show_diff: bool = typer.Option(False, "--diff", help="Show SQL diffs"),
                 uri: str | None = UriOpt) -> None:
    """Every version the view has had on REF: when, who, which commit, what SQL."""
    k = ContentKey.parse(key)
    path = f"/api/v2/trees/{ref_path(ref)}/views/{k.to_path_string()}/history"
    c = client(uri)
    page = c.call("GET", path)
    audit = {"versions": page["versions"]}
    while page.get("hasMore"):  # the audit is paged
        page = c.call("GET", path, params={"pageToken": page["token"]})
        audit["versions"] += page["versions"]
    t = Table("version", "current from", "until", "author", "commit", "message")
    for v in audit["versions"]:
        t.add_row(str(v["versionId"]), v["currentFrom"], v["currentUntil"] or "now",
                  v["commit"]["author"] or "", v["commit"]["hash"][:12], v["commit"]["message"])
    console.print(t)
    if show_diff:
        for v in audit["versions"]:
            for dialect, text in v["sqlDiff"].items():
                if text:
                    console.print(f"# version {v['versionId']} ({dialect})\n{text}")


def register(app: typer.Typer) -> None:
    app.add_typer(_refs_app("branch"), name="branch")
    app.add_typer(_refs_app("tag"), name="tag")
    app.add_typer(view_app, name="view")
    for fn in (log, diff, merge, transplant, show):
        app.command()(fn)
