"""Versioning API: undo with an audit trail — restore keys as they were at
another commit or instant, revert commits (catalog.undo.restore,
catalog.undo.revert). Each is one new commit on the branch; a dry run answers
the same without writing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import Field

from api.auth.errors import Forbidden
from api.auth.guard import guard_of
from api.deps import Call, json_response
from api.idempotency import answering
from api.routes.trees import name_and_hash, require
from api.v2 import redact
from api.v2.requests import KeyBody, _MergeOptions
from api.v2.shapes import key_json, reference_json
from catalog.undo.restore import Restorer, RestoreResult, Visible
from catalog.undo.revert import KeysCheck, Reverter, RevertRequest
from core.auth import Privilege
from core.commits import Reference, RefType
from core.keys import ContentKey
from core.refs import normalize_hash, parse_ref

router = APIRouter(prefix="/api/v2/trees/{ref}/history")


class RestoreBody(_MergeOptions):
    source: str = Field(min_length=1, max_length=400)
    keys: list[KeyBody] = Field(min_length=1, max_length=1000)


class RevertBody(_MergeOptions):
    commits: list[str] = Field(min_length=1, max_length=100)
    parent: int = Field(1, ge=1, le=16)

    def hashes(self) -> list[str]:
        """A malformed hash is a 400 naming the field, as every route that
        takes hashes answers one (core.refs.normalize_hash)."""
        return [normalize_hash(h, context="commits") for h in self.commits]


def result_json(branch: str, r: RestoreResult) -> dict[str, Any]:
    return {
        "targetBranch": reference_json(Reference(branch, RefType.BRANCH, r.hash))
        if r.hash else None,
        "hash": r.hash, "dryRun": r.dry_run, "message": r.message,
        "keys": [{"key": key_json(k.key), "action": k.action, "type": k.content_type,
                  "source": {"ref": k.source.label, "hash": k.source.hash}, **k.detail}
                 for k in r.keys]}


def _writer(request: Request, branch: str) -> Any:
    """Checks the caller may write each key it changes (None: no guard)."""
    guard = guard_of(request)
    if guard is None:
        return None
    return lambda key: guard.require(request, Privilege.WRITE, branch, key.elements)


def _reader(request: Request, branch: str) -> Visible:
    """Whether the caller may read a key on the branch (None: no guard); a
    key it may not read answers as one that is not there."""
    guard = guard_of(request)
    if guard is None:
        return None
    spec = parse_ref(branch)
    return lambda key: guard.allows(request, Privilege.READ, spec, key.elements)


def _reverter_check(request: Request, branch: str) -> KeysCheck:
    """Checks the caller may read every key the commits changed (a refusal
    that names none of them: some may be hidden from it) and write each."""
    guard = guard_of(request)
    if guard is None:
        return None
    spec = parse_ref(branch)

    def check(keys: Sequence[ContentKey]) -> None:
        if not all(guard.allows(request, Privilege.READ, spec, k.elements) for k in keys):
            raise Forbidden(f"Principal '{guard.principal_of(request).name}' lacks the 'read' "
                            f"privilege on some of the keys these commits changed on "
                            f"reference '{branch}'")
        for k in keys:
            guard.require(request, Privilege.WRITE, spec, k.elements)

    return check


@router.post("/restore")
def restore_keys(request: Request, ref: str, body: RestoreBody) -> Response:
    branch, expected = name_and_hash(ref, "A restore")
    parse_ref(body.source)  # a 400 naming the grammar's complaint
    require(request, Privilege.READ, body.source)
    c = Call(request)
    keys = [k.key() for k in body.keys]
    answer = answering(request, lambda r: json_response(result_json(branch, r)))
    return answer(Restorer(c.svc.catalog).restore(
        parse_ref(branch), body.source, keys, c.who, body.dry, expected,
        _writer(request, branch), _reader(request, branch)))


@router.post("/revert")
def revert_commits(request: Request, ref: str, body: RevertBody) -> Response:
    branch, expected = name_and_hash(ref, "A revert")
    hashes = body.hashes()
    guard = guard_of(request)
    if guard is not None:  # a commit the caller may not read is one it has never heard of
        for h in hashes:
            guard.require_some(request, Privilege.READ, f"@{h}")
    c = Call(request)
    # A commit's message is shown only to a reader of the whole branch: the
    # revert's message quotes those it reverts only to such a caller.
    readable = guard.key_filter(request, parse_ref(branch)) if guard is not None else None
    req = RevertRequest(hashes, body.parent, body.default_key_merge_mode,
                        body.modes(), body.dry, redact.shows_commit_meta(readable))
    answer = answering(request, lambda r: json_response(result_json(branch, r)))
    return answer(Reverter(c.svc.catalog).revert(parse_ref(branch), req, c.who, expected,
                                                 _reverter_check(request, branch)))

