"""``sapwood restore`` and ``sapwood revert``: undo with an audit trail over
HTTP (``/api/v2/trees/{branch@hash}/history/restore|revert``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.client import ref_path
from cli.versioning import UriOpt, _modes, client, console
from core.keys import ContentKey

BranchOpt = typer.Option("main", "--branch", "-b", help="The branch to change")


def _report(result: dict[str, Any], verb: str) -> None:
    for k in result["keys"]:
        name = ".".join(k["key"]["elements"])
        extra = ""
        if "sourceVersionId" in k:
            extra = f"  view version {k['sourceVersionId']} as new version {k['versionId']}"
        elif k.get("sourceSnapshotId") is not None:
            extra = f"  snapshot {k['sourceSnapshotId']}"
        console.print(f"{k['action']:9} {name}  from {k['source']['ref']} "
                      f"({k['source']['hash'][:12]}){extra}", soft_wrap=True)
    if result["dryRun"]:
        console.print(f"{verb}: nothing written (dry run)")
    elif result["hash"]:
        console.print(f"{verb}: {result['targetBranch']['name']} is now at "
                      f"{result['hash'][:12]}  ({result['message']})", soft_wrap=True)
    else:
        console.print(f"{verb}: nothing to change")


def restore(keys: list[str],
            source: str = typer.Option(..., "--from", help="REF, REF@HASH or REF*INSTANT"),
            branch: str = BranchOpt, dry_run: bool = typer.Option(False, "--dry-run"),
            uri: str | None = UriOpt) -> None:
    """Make KEYs on a branch as they were at a ref, commit or instant: one new
    commit (a view gets a new version equal to the old one; a table its old
    snapshot as current, the ones in between kept)."""
    c = client(uri)
    head = c.reference(branch)["hash"]
    result = c.call("POST", f"/api/v2/trees/{ref_path(branch)}@{head}/history/restore",
                    json={"source": source, "dryRun": dry_run, "keys": [
                        {"elements": list(ContentKey.parse(k).elements)} for k in keys]})
    _report(result, "restore")


def revert(hashes: list[str], branch: str = BranchOpt,
           parent: int = typer.Option(1, "--parent", help="For a merge: the side kept"),
           dry_run: bool = typer.Option(False, "--dry-run"),
           force: Annotated[list[str] | None,
                            typer.Option("--force", help="Revert KEY though changed since")] = None,
           drop: Annotated[list[str] | None,
                           typer.Option("--drop", help="Leave KEY as it is")] = None,
           uri: str | None = UriOpt) -> None:
    """Undo what commits (a merge too) changed, in one new commit."""
    c = client(uri)
    head = c.reference(branch)["hash"]
    result = c.call("POST", f"/api/v2/trees/{ref_path(branch)}@{head}/history/revert",
                    json={"commits": hashes, "parent": parent, "dryRun": dry_run,
                          "keyMergeModes": _modes(force or [], drop or [])})
    _report(result, "revert")


def register(app: typer.Typer) -> None:
    app.command()(restore)
    app.command()(revert)
