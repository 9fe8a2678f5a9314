"""``sapwood view deps|dependents|lineage|recompile|transpile KEY`` and
``sapwood views check [REF]``: what views read, whether they still hold,
and the versions the catalog makes of them, over HTTP."""

from __future__ import annotations

import typer
from rich.table import Table

from cli.client import ref_path
from cli.versioning import UriOpt, client, console, view_app
from core.keys import ContentKey

RefOpt = typer.Option("main", "--ref", help="Ref spec (branch, name@hash, name*instant)")
views_app = typer.Typer(no_args_is_help=True, help="All the views of a ref")


def _key(key: str) -> str:
    return ContentKey(key.split(".")).to_path_string()


@view_app.command("deps")
def deps(key: str, ref: str = RefOpt, uri: str | None = UriOpt) -> None:
    """What KEY reads, recursively (depth, via whom, whether it still exists)."""
    out = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/views/{_key(key)}/"
                                  "dependencies")
    console.print(f"{key}: {out['status']}" + "".join(f"\n  {r}" for r in out["reasons"]))
    t = Table("depth", "key", "type", "via", "exists")
    for d in out["dependencies"]:
        t.add_row(str(d["depth"]), ".".join(d["key"]), d["type"], ".".join(d["via"]),
                  "yes" if d["exists"] else "NO")
    console.print(t)


@view_app.command("dependents")
def dependents(key: str, ref: str = RefOpt, uri: str | None = UriOpt) -> None:
    """The views that read KEY (a table or a view), recursively."""
    out = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/contents/{_key(key)}/"
                                  "dependents")
    t = Table("depth", "view", "reads", "status")
    for d in out["dependents"]:
        t.add_row(str(d["depth"]), ".".join(d["key"]), ".".join(d["via"]), d["status"])
    console.print(t)


@view_app.command("lineage")
def lineage(key: str, ref: str = RefOpt, uri: str | None = UriOpt) -> None:
    """Where each output column of view KEY comes from."""
    out = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/views/{_key(key)}/lineage")
    t = Table("column", "derived", "origins")
    for c in out["columns"]:
        t.add_row(c["name"], "yes" if c["derived"] else "no",
                  ", ".join(".".join([*o["table"], o["column"]]) for o in c["origins"]))
    console.print(t)


@view_app.command("recompile")
def recompile(key: str, branch: str = typer.Option("main", "--branch", help="Branch"),
              uri: str | None = UriOpt) -> None:
    """Expand KEY again against what its bases are now; a new version if it changed."""
    out = client(uri).call("POST", f"/api/v2/trees/{ref_path(branch)}/views/{_key(key)}/"
                                   "recompile")
    what = (f"recompiled: version {out['versionId']}, columns {', '.join(out['columns'])}"
            if out["recompiled"] else f"unchanged (version {out['versionId']})")
    console.print(f"{key}: {what}")


@view_app.command("transpile")
def transpile(key: str, source: str = typer.Option(..., "--from", help="Dialect it has"),
              target: str = typer.Option(..., "--to", help="Dialect to add"),
              branch: str = typer.Option("main", "--branch", help="Branch"),
              uri: str | None = UriOpt) -> None:
    """Add a representation of KEY in another dialect (sqlglot), as a new version."""
    out = client(uri).call("POST", f"/api/v2/trees/{ref_path(branch)}/views/{_key(key)}/"
                                   "representations", params={"from": source, "to": target})
    meta = out["metadata"]
    version = next(v for v in meta["versions"]
                   if v["version-id"] == meta["current-version-id"])
    sql = next(r["sql"] for r in version["representations"] if r["dialect"] == target)
    console.print(f"{key}: version {version['version-id']} adds {target}:\n{sql}")


@views_app.command("check")
def check(ref: str = typer.Argument("main", help="Ref spec"),
          uri: str | None = UriOpt) -> None:
    """List the views of REF that are invalid or unanalysed, with reasons;
    exit 1 when there is any."""
    out = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/views")
    bad = [v for v in out["views"] if v["status"] != "ok"]
    for v in bad:
        console.print(f"{'.'.join(v['key'])}: {v['status']}")
        for r in v["reasons"]:
            console.print(f"  {r}")
    console.print(f"{len(out['views'])} views, {len(bad)} not ok")
    if bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(views_app, name="views")
