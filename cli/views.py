"""``sapwood view deps|dependents|lineage|recompile|transpile KEY`` and
``sapwood view check`` (also ``sapwood views check``, its first name): what
views read, whether they still hold, and the versions the catalog makes of
them, over HTTP."""

from __future__ import annotations

import typer

from cli.client import CatalogClient, CliError, Wanted, ref_path
from cli.missing import missing_key
from cli.options import (
    BranchOpt,
    KeyArg,
    OldBranchOpt,
    OldRefArg,
    RefOpt,
    UriOpt,
    ViewArg,
    one_ref,
)
from cli.output import JsonOpt, echo, plural, print_json, print_table
from cli.versioning import client, view_app
from core.keys import ContentKey

# The first name of `view check`, kept so that scripts using it keep working.
views_app = typer.Typer(no_args_is_help=True, hidden=True,
                        help="The old name of the view group's check: sapwood view check")


def _key(key: str) -> str:
    return ContentKey(key.split(".")).to_path_string()


@view_app.command("deps")
def deps(key: str = ViewArg, ref: str | None = RefOpt, as_json: bool = JsonOpt,
         uri: str | None = UriOpt) -> None:
    """What view KEY reads, recursively.

    Depth, via whom, whether it still exists. Exit 1 when KEY is not ok
    (something it reads, at any depth, does not hold), as view check."""
    ref = one_ref(ref)
    out = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/views/{_key(key)}/"
                                  "dependencies", wanted=Wanted(ref, key, "view"))
    if as_json:
        print_json(out)
    else:
        echo(f"{key}: {out['status']}" + "".join(f"\n  {r}" for r in out["reasons"]))
        print_table(("depth", "key", "type", "via", "exists"),
                    ((str(d["depth"]), ".".join(d["key"]), d.get("type", ""),
                      ".".join(d["via"]), _exists(d))
                     for d in out["dependencies"]), empty=f"{key} reads nothing")
    if out["status"] != "ok":
        raise typer.Exit(1)


def _exists(d: dict[str, object]) -> str:
    # A dependency the caller may not read is named, nothing more.
    return "" if "exists" not in d else "yes" if d["exists"] else "NO"


@view_app.command("dependents")
def dependents(key: str = KeyArg, ref: str | None = RefOpt, as_json: bool = JsonOpt,
               uri: str | None = UriOpt) -> None:
    """The views that read KEY (a table or a view), recursively.

    Also after KEY was dropped: the views still reading it."""
    ref = one_ref(ref)
    c = client(uri)
    out = c.call("GET", f"/api/v2/trees/{ref_path(ref)}/contents/{_key(key)}/dependents")
    if as_json:
        print_json(out)
        return
    if not out.get("exists", True):
        n = len(out["dependents"])
        if not n:
            _held_once(c, ref, key)
        echo(f"{key} does not exist at {ref}; " + (
            f"{n} view{' reads' if n == 1 else 's read'} it still" if n else "no view reads it"))
        if not n:
            return
    print_table(("depth", "view", "reads", "status"),
                ((str(d["depth"]), ".".join(d["key"]), ".".join(d["via"]), d["status"])
                 for d in out["dependents"]), empty=f"no view reads {key} at {ref}")


def _held_once(c: CatalogClient, ref: str, key: str) -> None:
    """For a missing KEY no view reads: a CliError (with what was probably
    meant) unless a commit of ``ref``'s history changed it (a dropped key,
    whose "no view reads it" is the answer). A typo is not an all-clear."""
    params = {"key": _key(key), "maxRecords": 1}
    for page in c.pages(f"/api/v2/trees/{ref_path(ref)}/history", params):
        if page.get("logEntries"):
            return
    wanted = Wanted(ref, key)
    raise CliError(missing_key(c, wanted, f"key '{key}' does not exist at '{ref}'"))


@view_app.command("lineage")
def lineage(key: str = ViewArg, ref: str | None = RefOpt, as_json: bool = JsonOpt,
            uri: str | None = UriOpt) -> None:
    """Where each output column of view KEY comes from."""
    ref = one_ref(ref)
    out = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/views/{_key(key)}/lineage",
                           wanted=Wanted(ref, key, "view"))
    if as_json:
        print_json(out)
        return
    print_table(("column", "derived", "origins"),
                ((c["name"], "yes" if c["derived"] else "no",
                  ", ".join(".".join([*o["table"], o["column"]]) for o in c["origins"]))
                 for c in out["columns"]), empty=f"{key} has no columns", wrap=("origins",))


@view_app.command("recompile")
def recompile(key: str = ViewArg, ref: str | None = BranchOpt, as_json: bool = JsonOpt,
              uri: str | None = UriOpt, old_branch: str | None = OldBranchOpt) -> None:
    """Expand view KEY again against its bases as they are now.

    A new version if it changed."""
    branch = one_ref(ref, old_branch)
    out = client(uri).call("POST", f"/api/v2/trees/{ref_path(branch)}/views/{_key(key)}/"
                                   "recompile", wanted=Wanted(branch, key, "view"))
    if as_json:
        print_json(out)
        return
    what = (f"recompiled: version {out['versionId']}, columns {', '.join(out['columns'])}"
            if out["recompiled"] else f"unchanged (version {out['versionId']})")
    echo(f"{key}: {what}")


@view_app.command("transpile")
def transpile(key: str = ViewArg,
              source: str = typer.Option(..., "--from", metavar="DIALECT",
                                         help="A dialect the view has (spark, trino, ...)"),
              target: str = typer.Option(..., "--to", metavar="DIALECT",
                                         help="The dialect to add"),
              ref: str | None = BranchOpt, as_json: bool = JsonOpt,
              uri: str | None = UriOpt, old_branch: str | None = OldBranchOpt) -> None:
    """Add view KEY's SQL in another dialect, as a new version.

    Translated by sqlglot."""
    branch = one_ref(ref, old_branch)
    out = client(uri).call("POST", f"/api/v2/trees/{ref_path(branch)}/views/{_key(key)}/"
                                   "representations", params={"from": source, "to": target},
                           wanted=Wanted(branch, key, "view"))
    if as_json:
        print_json(out)
        return
    meta = out["metadata"]
    version = next(v for v in meta["versions"]
                   if v["version-id"] == meta["current-version-id"])
    sql = next(r["sql"] for r in version["representations"] if r["dialect"] == target)
    echo(f"{key}: version {version['version-id']} adds {target}:\n{sql}")


@view_app.command("check")
@views_app.command("check")
def check(ref: str | None = RefOpt, as_json: bool = JsonOpt, uri: str | None = UriOpt,
          old_ref: str | None = OldRefArg) -> None:
    """The views of a reference that are not ok, with reasons.

    Exit 1 when there is any. Also answers as sapwood views check, its first
    name."""
    ref = one_ref(ref, old_ref)
    out = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/views")
    bad = [v for v in out["views"] if v["status"] != "ok"]
    if as_json:
        print_json(out)
    else:
        for v in bad:
            echo(f"{'.'.join(v['key'])}: {v['status']}")
            for r in v["reasons"]:
                echo(f"  {r}")
        n = len(out["views"])
        echo(f"{plural(n, 'view')}, {len(bad)} not ok" if n else f"no views on {ref}")
    if bad:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(views_app, name="views")
