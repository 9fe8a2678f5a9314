"""``sapwood mv create|replace|drop|show|status|plan|refresh``: materialized
views over HTTP; ``refresh`` runs the plan in a local Spark session (the
catalog keeps the metadata; an engine computes the rows)."""

from __future__ import annotations

from typing import Any

import typer

from cli.client import CliError, Wanted, ref_path
from cli.options import BranchOpt, OldBranchOpt, OldRefArg, RefOpt, UriOpt, one_ref
from cli.output import FullOpt, JsonOpt, echo, print_json, print_table, short_hash
from cli.spark_verbs import spark_verb
from cli.versioning import client
from core.keys import ContentKey

mv_app = typer.Typer(no_args_is_help=True, help="Materialized views: define, refresh, freshness.")
MvArg = typer.Argument(..., metavar="KEY", show_default=False,
                       help="A materialized view: namespace.name")
PropOpt = typer.Option([], "--property", "-p", metavar="KEY=VALUE",
                       help="A property (repeatable), e.g. max-staleness-ms=60000")
DialectOpt = typer.Option("spark", "--dialect", metavar="DIALECT",
                          help="The SQL's dialect (spark, trino, ...)")


def _wanted(ref: str, key: str) -> Wanted:
    return Wanted(ref, key, "materialized view")


def _path(ref: str, key: str, tail: str = "") -> str:
    return (f"/api/v2/trees/{ref_path(ref)}/materialized-views/"
            f"{ContentKey(key.split('.')).to_path_string()}{tail}")


def _props(pairs: list[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        k, eq, v = p.partition("=")
        if not eq or not k:
            raise CliError(f"invalid property {p!r}: expected key=value")
        out[k] = v
    return out


@mv_app.command("create")
def create(key: str = MvArg, sql: str = typer.Option(..., "--sql", metavar="SQL",
                                                      help="The query"),
           dialect: str = DialectOpt, ref: str | None = BranchOpt,
           properties: list[str] = PropOpt, as_json: bool = JsonOpt,
           uri: str | None = UriOpt, old_branch: str | None = OldBranchOpt) -> None:
    """Define KEY (ns.name) on a branch.

    Its columns are inferred by sqlglot."""
    branch = one_ref(ref, old_branch)
    body = {"key": {"elements": key.split(".")}, "sql": sql, "dialect": dialect,
            "defaultNamespace": key.split(".")[:-1], "properties": _props(properties)}
    out = client(uri).call("POST", f"/api/v2/trees/{ref_path(branch)}/materialized-views",
                           json=body)
    if as_json:
        print_json(out)
        return
    echo(f"created {key} (version {out['versionId']}, not refreshed yet)")


@mv_app.command("replace")
def replace(key: str = MvArg,
            sql: str | None = typer.Option(None, "--sql", metavar="SQL",
                                           help="The new query (default: the query stays)"),
            dialect: str = DialectOpt, ref: str | None = BranchOpt,
            properties: list[str] = PropOpt, as_json: bool = JsonOpt,
            uri: str | None = UriOpt, old_branch: str | None = OldBranchOpt) -> None:
    """A new definition (stale until refreshed) and/or properties."""
    branch = one_ref(ref, old_branch)
    body: dict[str, Any] = {"dialect": dialect, "properties": _props(properties),
                            "defaultNamespace": key.split(".")[:-1]}
    if sql is not None:
        body["sql"] = sql
    out = client(uri).call("PUT", _path(branch, key), json=body, wanted=_wanted(branch, key))
    if as_json:
        print_json(out)
        return
    echo(f"{key} is at version {out['versionId']}")


@mv_app.command("drop")
def drop(key: str = MvArg, ref: str | None = BranchOpt, uri: str | None = UriOpt,
         old_branch: str | None = OldBranchOpt) -> None:
    """Drop KEY and its storage in one commit."""
    branch = one_ref(ref, old_branch)
    client(uri).call("DELETE", _path(branch, key), wanted=_wanted(branch, key))
    echo(f"dropped {key}")


@mv_app.command("show")
def show(key: str = MvArg, ref: str | None = RefOpt, full: bool = FullOpt,
         as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """KEY's definition and its refreshes."""
    ref = one_ref(ref)
    out = client(uri).call("GET", _path(ref, key), wanted=_wanted(ref, key))
    if as_json:
        print_json(out)
        return
    for r in out["representations"]:
        echo(f"[{r['dialect']}] {r['sql']}")
    print_table(("refresh", "version", "kind", "source commit", "base tables"),
                ((str(r["refresh-id"]), str(r["version-id"]), r["refresh-kind"],
                  short_hash(r["source-commit"], full),
                  ", ".join(f"{k}@{b['snapshot-reference']}" for k, b in r["base-tables"].items()))
                 for r in out["refreshes"]), empty=f"{key} has not been refreshed",
                wrap=("base tables",))


@mv_app.command("status")
def status(ref: str | None = RefOpt,
           key: str | None = typer.Option(None, "--key", metavar="KEY",
                                          help="Only this materialized view"),
           as_json: bool = typer.Option(
               False, "--json", help="Print one JSON document: each view's freshness "
                                     "answer from the API, by dotted key"),
           uri: str | None = UriOpt, old_ref: str | None = OldRefArg) -> None:
    """Fresh, stale or invalid: every materialized view of a reference.

    Stale is told per base table: the snapshot read against the one now, and
    how long ago it changed. Exit 1 when any is not fresh."""
    ref = one_ref(ref, old_ref)
    c = client(uri)
    keys = [key] if key else _all(c, ref)
    found = {k: c.call("GET", _path(ref, k, "/freshness"), wanted=_wanted(ref, k))
             for k in keys}
    worst = max((0 if f["status"] == "fresh" else 1 for f in found.values()), default=0)
    if as_json:
        print_json(found)
        raise typer.Exit(worst)
    rows = []
    for k, f in found.items():
        why = "; ".join(f["reasons"])
        bases = f["baseTables"] or [{"identifier": "", "snapshotRead": None,
                                     "snapshotCurrent": None, "changedAgoMs": None}]
        for i, b in enumerate(bases):
            ago = b["changedAgoMs"]
            rows.append((k if i == 0 else "", f["status"] if i == 0 else "", b["identifier"],
                         str(b["snapshotRead"]), str(b["snapshotCurrent"]),
                         f"{ago / 1000:.1f} s" if ago is not None else "",
                         why if i == 0 else ""))
    print_table(("view", "status", "base table", "read", "now", "changed ago", "why"), rows,
                empty=f"no materialized views on {ref}", wrap=("why",))
    raise typer.Exit(worst)


def _all(c: Any, ref: str) -> list[str]:
    out, token = [], None
    while True:
        page = c.call("GET", f"/api/v2/trees/{ref_path(ref)}/entries",
                      params={"pageToken": token} if token else {})
        out += [".".join(e["name"]["elements"]) for e in page["entries"]
                if e["type"] == "MATERIALIZED_VIEW"]
        token = page.get("token")
        if not page.get("hasMore"):
            return out


RefreshFullOpt = typer.Option(False, "--full", help="A full refresh, even where an "
                                                   "incremental one would do")


@mv_app.command("plan")
def plan(key: str = MvArg, ref: str | None = BranchOpt, full: bool = RefreshFullOpt,
         as_json: bool = JsonOpt, uri: str | None = UriOpt,
         old_branch: str | None = OldBranchOpt) -> None:
    """What a refresh of KEY would do now: full or incremental, and why."""
    branch = one_ref(ref, old_branch)
    out = client(uri).call("GET", _path(branch, key, "/refresh-plan"),
                           params={"mode": "full" if full else "auto"},
                           wanted=_wanted(branch, key))
    if as_json:
        print_json(out)
        return
    # The pin as every table shows a hash: 12 characters (--json has it whole).
    name, at, pinned = str(out["pinnedReference"]).partition("@")
    echo(f"{out['kind']}: {out['reason']} (base tables at "
         f"{name + at + short_hash(pinned) if at else name})")


@mv_app.command("refresh")
def refresh(key: str = MvArg, ref: str | None = BranchOpt, full: bool = RefreshFullOpt,
            as_json: bool = typer.Option(
                False, "--json", help="Print the refresh plan it followed (the API's JSON)"),
            uri: str | None = UriOpt, old_branch: str | None = OldBranchOpt) -> None:
    """Refresh KEY on a branch with a local Spark session.

    Needs the Spark extra."""
    branch = one_ref(ref, old_branch)
    spark_verb("mv-refresh", key, "--uri", client(uri).uri, "--branch", branch,
               *(["--full"] if full else []), *(["--json"] if as_json else []))


def register(app: typer.Typer) -> None:
    app.add_typer(mv_app, name="mv")
