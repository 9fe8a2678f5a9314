"""``sapwood restore`` and ``sapwood revert``: undo with an audit trail over
HTTP (``/api/v2/trees/{branch@hash}/history/restore|revert``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.client import CliError, ref_path
from cli.options import BranchOpt, OldBranchOpt, UriOpt, commit_hashes, one_ref
from cli.output import JsonOpt, echo, print_json
from cli.versioning import _modes, client
from core.keys import ContentKey

# What a dry run says it would do to a key, by the action the API reports.
_WOULD = {"restored": "would restore", "revived": "would revive", "deleted": "would delete"}


def _report(result: dict[str, Any], verb: str, branch: str) -> None:
    dry = result["dryRun"]
    for k in result["keys"]:
        name = ".".join(k["key"]["elements"])
        extra = ""
        if "sourceVersionId" in k:
            extra = f"  view version {k['sourceVersionId']} as new version {k['versionId']}"
        elif k.get("sourceSnapshotId") is not None:
            extra = f"  snapshot {k['sourceSnapshotId']}"
        action = _WOULD.get(k["action"], k["action"]) if dry else k["action"]
        echo(f"{action:9} {name}  from {k['source']['ref']} ({k['source']['hash'][:12]}){extra}")
    changes = sum(k["action"] != "unchanged" for k in result["keys"])
    if dry:
        echo(f"{verb} (dry run): would change {changes} key{'' if changes == 1 else 's'} on "
             f"{branch}; nothing written")
    elif result["hash"]:
        echo(f"{verb}: {result['targetBranch']['name']} is now at {result['hash'][:12]}  "
             f"({result['message']})")
    else:
        echo(f"{verb}: nothing to change")


def restore(keys: Annotated[list[str], typer.Argument(
                metavar="KEY", show_default=False,
                help="A table or view to put back: namespace.name")],
            source: str = typer.Option(..., "--from", metavar="REF",
                                       help="Where to take them from: REF, REF@HASH, REF~N "
                                            "or REF*INSTANT"),
            ref: str | None = BranchOpt,
            dry_run: bool = typer.Option(False, "--dry-run", help="Say what would change; "
                                                                  "write nothing"),
            yes: bool = typer.Option(False, "--yes", "-y",
                                     help="Delete the KEYs absent at the source (without it "
                                          "a restore that would delete any writes nothing)"),
            as_json: bool = JsonOpt, uri: str | None = UriOpt,
            old_branch: str | None = OldBranchOpt) -> None:
    """Put KEYs back as they were at a ref, commit or instant.

    One new commit on the branch: a view gets a new version equal to the old
    one; a table its old snapshot as current, the ones in between kept. A
    KEY that did not exist at the source is deleted, only with --yes (as
    git needs -f); a KEY that exists at neither side is an error."""
    branch = one_ref(ref, old_branch)
    c = client(uri)
    head = c.reference(branch).hash
    path = f"/api/v2/trees/{ref_path(branch)}@{head}/history/restore"
    body = {"source": source, "dryRun": True,
            "keys": [{"elements": list(ContentKey.parse(k).elements)} for k in keys]}
    result = c.call("POST", path, json=body)
    doomed = [".".join(k["key"]["elements"]) for k in result["keys"] if k["action"] == "deleted"]
    if not dry_run and doomed and not yes:
        # The dry run's answer says what would go; nothing was written.
        if not as_json:
            _report(result, "restore", branch)
        raise CliError(f"restore would delete {', '.join(doomed)} (absent at {source}); "
                       "run it again with --yes to delete, nothing was written")
    if not dry_run:  # at the head the dry run saw: a key changed since is a conflict
        result = c.call("POST", path, json={**body, "dryRun": False})
    if as_json:
        print_json(result)
    else:
        _report(result, "restore", branch)


def revert(hashes: Annotated[list[str], typer.Argument(
               metavar="HASH", show_default=False,
               help="A commit to undo: its hash or a prefix of 8 or more hex characters")],
           ref: str | None = BranchOpt,
           parent: int = typer.Option(1, "--parent", metavar="N",
                                      help="For a merge: the side kept (1: the branch it "
                                           "landed on)"),
           dry_run: bool = typer.Option(False, "--dry-run", help="Say what would change; "
                                                                 "write nothing"),
           force: Annotated[list[str] | None, typer.Option(
               "--force", metavar="KEY",
               help="Revert KEY though it changed since (repeatable)")] = None,
           drop: Annotated[list[str] | None, typer.Option(
               "--drop", metavar="KEY", help="Leave KEY as it is (repeatable)")] = None,
           as_json: bool = JsonOpt, uri: str | None = UriOpt,
           old_branch: str | None = OldBranchOpt) -> None:
    """Undo what commits (a merge too) changed, in one new commit."""
    branch = one_ref(ref, old_branch)
    hashes = commit_hashes(hashes)
    c = client(uri)
    head = c.reference(branch).hash
    result = c.call("POST", f"/api/v2/trees/{ref_path(branch)}@{head}/history/revert",
                    json={"commits": hashes, "parent": parent, "dryRun": dry_run,
                          "keyMergeModes": _modes(force or [], drop or [])})
    if as_json:
        print_json(result)
    else:
        _report(result, "revert", branch)


def register(app: typer.Typer) -> None:
    app.command()(restore)
    app.command()(revert)
