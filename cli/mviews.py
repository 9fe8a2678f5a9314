"""``sapwood mv create|replace|drop|show|status|plan|refresh``: materialized
views over HTTP; ``refresh`` runs the plan in a local Spark session (the
catalog keeps the metadata; an engine computes the rows)."""

from __future__ import annotations

from typing import Any

import typer

from cli.client import CliError, ref_path
from cli.output import JsonOpt, echo, print_json, print_table
from cli.versioning import UriOpt, client
from core.keys import ContentKey

mv_app = typer.Typer(no_args_is_help=True, help="Materialized views: define, refresh, freshness")
RefOpt = typer.Option("main", "--ref", help="Ref spec (branch, name@hash, name*instant)")
BranchOpt = typer.Option("main", "--branch", help="Branch")
PropOpt = typer.Option([], "--property", "-p", help="key=value (repeatable), e.g. "
                                                    "max-staleness-ms=60000")


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
def create(key: str, sql: str = typer.Option(..., "--sql", help="The query"),
           dialect: str = typer.Option("spark", "--dialect"), branch: str = BranchOpt,
           properties: list[str] = PropOpt, as_json: bool = JsonOpt,
           uri: str | None = UriOpt) -> None:
    """Define KEY (ns.name) on a branch.

    Its columns are inferred by sqlglot."""
    body = {"key": {"elements": key.split(".")}, "sql": sql, "dialect": dialect,
            "defaultNamespace": key.split(".")[:-1], "properties": _props(properties)}
    out = client(uri).call("POST", f"/api/v2/trees/{ref_path(branch)}/materialized-views",
                           json=body)
    if as_json:
        print_json(out)
        return
    echo(f"created {key} (version {out['versionId']}, not refreshed yet)")


@mv_app.command("replace")
def replace(key: str, sql: str | None = typer.Option(None, "--sql"),
            dialect: str = typer.Option("spark", "--dialect"), branch: str = BranchOpt,
            properties: list[str] = PropOpt, as_json: bool = JsonOpt,
            uri: str | None = UriOpt) -> None:
    """A new definition (stale until refreshed) and/or properties."""
    body: dict[str, Any] = {"dialect": dialect, "properties": _props(properties),
                            "defaultNamespace": key.split(".")[:-1]}
    if sql is not None:
        body["sql"] = sql
    out = client(uri).call("PUT", _path(branch, key), json=body)
    if as_json:
        print_json(out)
        return
    echo(f"{key} is at version {out['versionId']}")


@mv_app.command("drop")
def drop(key: str, branch: str = BranchOpt, uri: str | None = UriOpt) -> None:
    """Drop KEY and its storage in one commit."""
    client(uri).call("DELETE", _path(branch, key))
    echo(f"dropped {key}")


@mv_app.command("show")
def show(key: str, ref: str = RefOpt, as_json: bool = JsonOpt,
         uri: str | None = UriOpt) -> None:
    """KEY's definition and its refreshes."""
    out = client(uri).call("GET", _path(ref, key))
    if as_json:
        print_json(out)
        return
    for r in out["representations"]:
        echo(f"[{r['dialect']}] {r['sql']}")
    print_table(("refresh", "version", "kind", "source commit", "base tables"),
                ((str(r["refresh-id"]), str(r["version-id"]), r["refresh-kind"],
                  r["source-commit"], ", ".join(f"{k}@{b['snapshot-reference']}"
                                                for k, b in r["base-tables"].items()))
                 for r in out["refreshes"]))


@mv_app.command("status")
def status(ref: str = typer.Argument("main", help="Ref spec"),
           key: str | None = typer.Option(None, "--key", help="Only this view"),
           as_json: bool = typer.Option(
               False, "--json", help="Print one JSON document: each view's freshness "
                                     "answer from the API, by dotted key"),
           uri: str | None = UriOpt) -> None:
    """Fresh, stale or invalid, for every materialized view at REF.

    Stale is told per base table: the snapshot read against the one now, and
    how long ago it changed. Exit 1 when any is not fresh."""
    c = client(uri)
    keys = [key] if key else _all(c, ref)
    found = {k: c.call("GET", _path(ref, k, "/freshness")) for k in keys}
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
    print_table(("view", "status", "base table", "read", "now", "changed ago", "why"), rows)
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


@mv_app.command("plan")
def plan(key: str, branch: str = BranchOpt, full: bool = typer.Option(False, "--full"),
         as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """What a refresh of KEY would do now: full or incremental, and why."""
    out = client(uri).call("GET", _path(branch, key, "/refresh-plan"),
                           params={"mode": "full" if full else "auto"})
    if as_json:
        print_json(out)
        return
    echo(f"{out['kind']}: {out['reason']} (base tables at {out['pinnedReference']})")


@mv_app.command("refresh")
def refresh(key: str, branch: str = BranchOpt, full: bool = typer.Option(False, "--full"),
            as_json: bool = typer.Option(
                False, "--json", help="Print the refresh plan it followed (the API's JSON)"),
            uri: str | None = UriOpt) -> None:
    """Refresh KEY on a branch with a local Spark session.

    Needs the Spark extra."""
    from spark.errors import CatalogError, SetupError
    from spark.mviews import refresh as run
    from spark.session import session

    base = client(uri).uri
    try:
        spark = session(base, ref=branch, catalog="sapwood", app_name="sapwood-mv-refresh",
                        log=lambda line: None)
    except SetupError as e:
        raise CliError(str(e)) from None
    try:
        out = run(spark, base, key, branch, "full" if full else "auto")
    except CatalogError as e:
        raise CliError(str(e)) from None
    finally:
        spark.stop()
    if as_json:
        print_json(out)
        return
    echo(f"{key}: {out['kind']} refresh ({out['reason']}); base tables at "
                  f"{out['pinnedReference']}")


def register(app: typer.Typer) -> None:
    app.add_typer(mv_app, name="mv")
