"""The versioning verbs of the ``sapwood`` CLI: branches, tags, log, diff,
merge, transplant, show and the view audit, all over HTTP."""

from __future__ import annotations

import os
from itertools import pairwise
from typing import Annotated, Any

import typer

from cli.client import DEFAULT_URI, CatalogClient, CliError, Wanted, ref_path
from cli.options import KeyArg, OldRefArg, RefOpt, UriOpt, ViewArg, commit_hashes, one_ref
from cli.output import (
    FullOpt,
    JsonOpt,
    echo,
    merged_pages,
    print_json,
    print_table,
    short_hash,
    short_instant,
)
from core.keys import ContentKey


def client(uri: str | None) -> CatalogClient:
    return CatalogClient(uri or os.environ.get("SAPWOOD_URI") or DEFAULT_URI)


def _refs_app(kind: str) -> typer.Typer:
    app = typer.Typer(no_args_is_help=True, help=f"List, create, delete and move {kind}es."
                      if kind == "branch" else "List, create, delete and move tags.")
    type_ = kind.upper()

    plural_ = f"{kind}es" if kind == "branch" else f"{kind}s"
    name_arg = typer.Argument(..., metavar="NAME", show_default=False,
                              help=f"The {kind}'s name")

    @app.command("list")
    def list_(full: bool = FullOpt, as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
        """List them with their heads."""
        found = merged_pages(client(uri).pages("/api/v2/trees"), "references")
        found["references"] = [r for r in found["references"] if r["type"] == type_]
        if as_json:
            print_json(found)
            return
        print_table(("name", "hash"), ((r["name"], short_hash(r["hash"], full))
                                       for r in found["references"]), empty=f"no {plural_}")

    @app.command()
    def create(name: str = name_arg,
               source: str = typer.Option("main", "--from", metavar="REF",
                                          help="Where it starts: a reference or any ref spec"),
               as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
        """Create NAME at the head of a source reference (or any ref spec)."""
        c = client(uri)
        src = c.reference(source)
        body = {"type": src.type, "name": src.name, "hash": src.hash}
        made = c.call("POST", "/api/v2/trees", params={"name": name, "type": type_}, json=body)
        new = made["reference"]
        if as_json:
            print_json(made)
        else:
            echo(f"created {kind} {new['name']} at {new['hash'][:12]}")

    @app.command()
    def delete(name: str = name_arg, as_json: bool = JsonOpt,
               uri: str | None = UriOpt) -> None:
        """Delete NAME (at its current head)."""
        c = client(uri)
        head = c.reference(name).hash
        gone = c.call("DELETE", f"/api/v2/trees/{ref_path(name)}@{head}",
                      params={"type": type_})
        if as_json:
            print_json(gone)
        else:
            echo(f"deleted {kind} {name} (was at {head[:12]})")

    @app.command()
    def assign(name: str = name_arg,
               target: str = typer.Argument(..., metavar="TARGET", show_default=False,
                                            help="Where it goes: a reference or any ref spec"),
               as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
        """Point NAME at TARGET (a ref or a ref spec)."""
        c = client(uri)
        head = c.reference(name).hash
        to = c.reference(target).hash
        moved = c.call("PUT", f"/api/v2/trees/{ref_path(name)}@{head}", params={"type": type_},
                       json={"type": "DETACHED", "hash": to})
        if as_json:
            print_json(moved)
        else:
            echo(f"{kind} {name}: {head[:12]} -> {to[:12]}")

    return app


def log(ref: str | None = RefOpt,
        key: str | None = typer.Option(None, "--key", metavar="KEY",
                                       help="Only commits that changed this key (ns.name)"),
        author: str | None = typer.Option(None, "--author", metavar="NAME",
                                          help="Only commits by this author"),
        since: str | None = typer.Option(None, "--since", metavar="INSTANT",
                                         help="Only commits at or after this instant "
                                              "(ISO 8601)"),
        until: str | None = typer.Option(None, "--until", metavar="INSTANT",
                                         help="Only commits at or before this instant "
                                              "(ISO 8601)"),
        limit: int = typer.Option(20, "--limit", min=1, metavar="N",
                                  help="At most N commits"),
        full: bool = FullOpt, as_json: bool = JsonOpt, uri: str | None = UriOpt,
        old_ref: str | None = OldRefArg) -> None:
    """Commits on a reference (first parents), newest first.

    The filters answer from the catalog's change index, however long the
    history."""
    ref = one_ref(ref, old_ref)
    params: dict[str, Any] = {"maxRecords": limit}
    if key:
        params["key"] = ContentKey.parse(key).to_path_string()
    params.update({k: v for k, v in (("author", author), ("since", since), ("until", until))
                   if v is not None})
    page = client(uri).call("GET", f"/api/v2/trees/{ref_path(ref)}/history", params=params)
    if as_json:
        print_json(page)
        return
    filtered = key or author or since or until
    print_table(("hash", "time", "author", "message"),
                ((short_hash(m["hash"], full), short_instant(m["commitTime"], full),
                  ", ".join(m["authors"]), m["message"])
                 for m in (e["commitMeta"] for e in page["logEntries"][:limit])),
                empty=f"no commits on {ref}" + (" match" if filtered else ""),
                wrap=("message",))


def diff(from_ref: str = typer.Argument(..., metavar="FROM", show_default=False,
                                         help="One side: a reference or any ref spec"),
         to_ref: str = typer.Argument(..., metavar="TO", show_default=False,
                                      help="The other side, compared with FROM"),
         as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """Keys that differ between two refs.

    + added, - removed, ~ changed."""
    pages = client(uri).pages(
        f"/api/v2/trees/{ref_path(from_ref)}/diff/{ref_path(to_ref)}")
    if as_json:
        print_json(merged_pages(pages, "diffs"))
        return
    n = 0
    for page in pages:
        for d in page["diffs"]:
            mark = "+" if d["from"] is None else "-" if d["to"] is None else "~"
            kind = (d["to"] or d["from"])["type"]
            echo(f"{mark} {'.'.join(d['key']['elements'])}  ({kind})")
            n += 1
    if not n:
        echo(f"no differences between {from_ref} and {to_ref}")


def _modes(force: list[str], drop: list[str]) -> list[dict[str, Any]]:
    return [{"key": {"elements": list(ContentKey.parse(k).elements)}, "mergeBehavior": m}
            for keys, m in ((force, "FORCE"), (drop, "DROP")) for k in keys]


# The outcomes of a merge's keys that change the target.
_CHANGES = ("APPLIED", "FORCED", "MERGED")
# How to resolve a conflicting key (as the web UI says it).
_RESOLVE = "--force KEY takes the source's change, --drop KEY keeps the target's"


def _keys(n: int) -> str:
    return f"{n} key{'' if n == 1 else 's'}"


def _resolve(d: dict[str, Any], target: str, source: str | None) -> None:
    """Under a conflicting key: a view's SQL diff per dialect (the target's
    to the source's, as the API found it) and how to resolve the key."""
    for dialect, diff in ((d.get("conflictDetails") or {}).get("sqlDiff") or {}).items():
        echo(f"    {dialect}:")
        for line in diff.splitlines():
            echo(f"      {line}")
    key = ".".join(d["key"]["elements"])
    theirs = f"{source}'s" if source else "the source's"
    echo(f"    resolve: --force {key} takes {theirs} change, --drop {key} keeps {target}'s")


def _report(result: dict[str, Any], verb: str, dry_run: bool = False,
            source: str | None = None) -> None:
    """Each key's outcome (a conflict with its diffs and how to resolve it),
    the target's views it breaks, and what happened; what a real merge
    broke is a warning on standard error."""
    for d in result["details"]:
        extra = f"  {d['conflict']['message']}" if d.get("conflict") else ""
        echo(f"{d.get('outcome', ''):9} {'.'.join(d['key']['elements'])}{extra}")
        if d.get("outcome") == "CONFLICT":
            _resolve(d, result["targetBranch"], source)
    target = result["targetBranch"]
    views = [(".".join(v["key"]), "; ".join(v["reasons"]))
             for v in result.get("invalidatedViews") or []]
    conflicts = [".".join(d["key"]["elements"]) for d in result["details"]
                 if d.get("outcome") == "CONFLICT"]
    if views and not result["wasApplied"]:
        echo(f"would invalidate {len(views)} view{'' if len(views) == 1 else 's'} on {target}:")
        for name, why in views:
            echo(f"  {name}: {why}")
    if result["wasApplied"]:
        echo(f"{verb}: {target} is now at {result['resultantTargetHash'][:12]}")
        for name, why in views:
            typer.echo(f"warning: view {name} on {target} is now invalid: {why}", err=True)
    elif conflicts:
        how = "would conflict on" if dry_run else "refused: conflicts on"
        echo(f"{verb}{' (dry run)' if dry_run else ''}: {how} {_keys(len(conflicts))} "
             f"({', '.join(conflicts)}); nothing written; {_RESOLVE}")
    elif dry_run:
        n = sum(d.get("outcome") in _CHANGES for d in result["details"])
        echo(f"{verb} (dry run): would change {_keys(n)} on {target}; nothing written")
    else:
        echo(f"{verb}: nothing to {verb}; {target} stays at "
             f"{result['resultantTargetHash'][:12]}")


def _ended(result: dict[str, Any], verb: str, dry_run: bool) -> None:
    """Exit 1 when keys conflict (a dry run too, as `git merge --no-commit`
    does); a refused merge also says so in one error line."""
    conflicts = [".".join(d["key"]["elements"]) for d in result["details"]
                 if d.get("outcome") == "CONFLICT"]
    if not conflicts:
        return
    if not dry_run:
        typer.echo(f"error: {verb} refused: conflicts on {', '.join(conflicts)}; {_RESOLVE}",
                   err=True)
    raise typer.Exit(1)


def merge(source: str = typer.Argument(..., metavar="SOURCE", show_default=False,
                                       help="What to merge: a reference or any ref spec"),
          into: str = typer.Option(..., "--into", metavar="BRANCH",
                                   help="The branch merged into"),
          dry_run: bool = typer.Option(False, "--dry-run",
                                       help="Say what would change; write nothing"),
          force: Annotated[list[str] | None, typer.Option(
              "--force", metavar="KEY",
              help="Take the source's change of KEY, conflict or not (repeatable)")] = None,
          drop: Annotated[list[str] | None, typer.Option(
              "--drop", metavar="KEY",
              help="Keep the target's value of KEY (repeatable)")] = None,
          as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """Merge SOURCE into a branch, three-way per key.

    Lists each key's outcome and the target's views the merge breaks (a
    warning after a real merge). Exits 1 when keys conflict, dry run or not."""
    # One request: the server finds both heads. Conflicts come back as the
    # merge's answer, so they can be shown.
    result = client(uri).merge(source, into, dry_run=dry_run,
                               force=[ContentKey.parse(k).elements for k in force or []],
                               drop=[ContentKey.parse(k).elements for k in drop or []],
                               raise_on_conflict=False).json
    if as_json:
        print_json(result)
    else:
        _report(result, "merge", dry_run, source)
    _ended(result, "merge", dry_run)


def transplant(hashes: Annotated[list[str], typer.Argument(
                   metavar="HASH", show_default=False,
                   help="A commit to replay: its hash or a prefix of 8 or more hex "
                        "characters")],
               onto: str = typer.Option(..., "--onto", metavar="BRANCH",
                                        help="The branch the commits are replayed onto"),
               as_json: bool = JsonOpt, uri: str | None = UriOpt) -> None:
    """Replay commits (oldest first) onto a branch, all or nothing.

    Exits 1 when keys conflict."""
    hashes = commit_hashes(hashes)
    result = client(uri).transplant(hashes, onto, raise_on_conflict=False).json
    if as_json:
        print_json(result)
    else:
        _report(result, "transplant")
    _ended(result, "transplant", False)


def show(key: str = KeyArg, ref: str | None = RefOpt,
         at: str | None = typer.Option(None, "--at", metavar="INSTANT",
                                       help="As it was at this instant on the reference "
                                            "(ISO 8601, or epoch milliseconds)"),
         as_json: bool = typer.Option(
             False, "--json", help="Print the API's JSON answer: the Iceberg REST "
                                   "loadView or loadTable answer, else the content"),
         uri: str | None = UriOpt) -> None:
    """A view's SQL, or a table's snapshot and schema.

    At a ref, and with --at, as it was at an instant."""
    ref = one_ref(ref)
    c = client(uri)
    spec = f"{ref}*{at}" if at else ref
    k = ContentKey.parse(key)
    content = c.key_content(spec, k)
    kind = content["content"]["type"]
    if kind in ("ICEBERG_VIEW", "MATERIALIZED_VIEW"):
        loaded = c.iceberg(spec, "views", k)
        if as_json:
            print_json(loaded)
            return
        meta = loaded["metadata"]
        cur = next(v for v in meta["versions"] if v["version-id"] == meta["current-version-id"])
        echo(f"view {key} at {spec}: version {cur['version-id']}")
        for r in cur["representations"]:
            echo(f"-- {r['dialect']}\n{r['sql']}")
    elif kind == "ICEBERG_TABLE":
        loaded = c.iceberg(spec, "tables", k)
        if as_json:
            print_json(loaded)
            return
        meta = loaded["metadata"]
        snap = meta.get("current-snapshot-id")
        echo(f"table {key} at {spec}: snapshot {snap if snap is not None else 'none'}")
        schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
        for f in schema["fields"]:
            ftype = f["type"] if isinstance(f["type"], str) else f["type"].get("type")
            echo(f"  {f['id']:>3} {f['name']}: {ftype}")
    elif as_json:
        print_json(content)
    else:
        echo(f"{key} at {spec} is a {kind}")


view_app = typer.Typer(no_args_is_help=True, help="Views: their versions, what they read, "
                                                  "whether they hold.")


@view_app.command("history")
def view_history(key: str = ViewArg, ref: str | None = RefOpt,
                 show_diff: bool = typer.Option(False, "--diff",
                                                help="Show each version's SQL diff"),
                 full: bool = FullOpt, as_json: bool = JsonOpt,
                 uri: str | None = UriOpt) -> None:
    """Every version the view has had on a reference.

    When, who, which commit, what SQL."""
    ref = one_ref(ref)
    k = ContentKey.parse(key)
    c = client(uri)
    try:
        audit = merged_pages(c.pages(
            f"/api/v2/trees/{ref_path(ref)}/views/{k.to_path_string()}/history",
            wanted=Wanted(ref, key, "view")), "versions")
    except CliError as e:
        if "*" not in ref or e.status != 404:
            raise
        raise CliError(_not_yet(c, ref, k) or str(e)) from None
    if as_json:
        print_json(audit)
        return
    versions = audit["versions"]
    # Each version is current until the next one is, the last until now:
    # then "until" says nothing the next row does not (and the table fits
    # 100 columns without it); a gap or an end (a drop) keeps it.
    chained = bool(versions) and versions[-1]["currentUntil"] is None and all(
        a["currentUntil"] == b["currentFrom"] for a, b in pairwise(versions))
    columns = ["version", "current from", "until", "author", "commit", "message"]
    rows = [[str(v["versionId"]), short_instant(v["currentFrom"], full),
             short_instant(v["currentUntil"], full) or "now", v["commit"]["author"] or "",
             short_hash(v["commit"]["hash"], full), v["commit"]["message"]] for v in versions]
    if chained:
        del columns[2]
        for row in rows:
            del row[2]
    print_table(columns, rows, empty=f"no versions of {key} on {ref}", wrap=("message",))
    if audit.get("historyExpired"):
        since = audit.get("historyExpiredBefore")
        echo("older versions expired (retention)"
             + (f": history before {since} is gone" if since else ""))
    if show_diff:
        for v in audit["versions"]:
            for dialect, text in v["sqlDiff"].items():
                if text:
                    echo(f"# version {v['versionId']} ({dialect})\n{text}")


def _not_yet(c: CatalogClient, spec: str, key: ContentKey) -> str | None:
    """For a view missing at ``branch*instant``: that it was created later,
    when and by which commit (the oldest commit since then that changed it);
    None when none did. A reference not there at the instant says so itself."""
    c.reference(spec)
    branch, instant = spec.rsplit("*", 1)
    oldest = None
    for page in c.pages(f"/api/v2/trees/{ref_path(branch)}/history",
                        {"key": key.to_path_string(), "since": instant}):
        oldest = (page.get("logEntries") or [oldest])[-1]
    if oldest is None:
        return None
    meta = oldest["commitMeta"]
    return (f"view '{key}' did not exist on {branch} at {instant}: it was created at "
            f"{meta['commitTime']} by commit {meta['hash'][:12]} ({meta['message']})")


def register(app: typer.Typer) -> None:
    app.add_typer(_refs_app("branch"), name="branch")
    app.add_typer(_refs_app("tag"), name="tag")
    app.add_typer(view_app, name="view")
    for fn in (log, diff, merge, transplant, show):
        app.command()(fn)
