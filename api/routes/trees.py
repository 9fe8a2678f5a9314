"""Versioning API: references (Nessie v2 ``/api/v2/config`` and ``/trees``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.auth.errors import Forbidden
from api.auth.guard import guard_of
from api.deps import (
    MaxRecords,
    NessieMaxRecords,
    NessiePageToken,
    VersioningPageToken,
    json_response,
    principal,
    services_of,
)
from api.idempotency import answering, once_of
from api.paging import Paging
from api.paths import ref_param
from api.v2.filtered import NessieFilter
from api.v2.requests import ReferenceBody
from api.v2.shapes import commit_meta_json, effective_json, page_json, reference_json
from catalog.versioning import Versioning
from core.auth import Privilege
from core.commits import DEFAULT_BRANCH, NO_ANCESTOR, Commit, Reference, RefType
from core.errors import bad_request
from core.refs import RefSpec

router = APIRouter(prefix="/api/v2")


def versioning_of(request: Request) -> Versioning:
    """The versioning API's door to the store (catalog.versioning), bound to
    the caller (api.deps.services_of)."""
    return services_of(request).versioning


def ref_type(value: str | None) -> RefType | None:
    if value is None:
        return None
    try:
        return RefType(value.upper())
    except ValueError:
        raise bad_request(f"Invalid reference type {value!r}: expected BRANCH or TAG") from None


def name_and_hash(ref: str, what: str) -> tuple[str, str]:
    """``name@hash``, as assign, delete, commit and restore address a ref."""
    spec = ref_param(ref)
    if spec.name is None or spec.hash is None or spec.parts:
        raise bad_request(f"{what} needs 'name@expectedHash', got {unquote(ref)!r}")
    return spec.name, spec.hash


def name_and_maybe_hash(ref: str, what: str) -> tuple[str, str | None]:
    """``name@hash`` or a bare ``name``, as a merge or transplant addresses
    its target: a bare name lands on the head the server finds, so that a
    client need not ask for the head first (one request a merge)."""
    spec = ref_param(ref)
    if spec.name is None or spec.parts:
        raise bad_request(f"{what} needs 'name' or 'name@expectedHash', got {unquote(ref)!r}")
    return spec.name, spec.hash


def require(request: Request, privilege: Privilege, spec: RefSpec | str) -> None:
    """A privilege on a whole reference, when authentication is on."""
    guard = guard_of(request)
    if guard is not None:
        guard.require(request, privilege, spec, None)


def require_on_protected(request: Request, name: str, what: str) -> None:
    """Moving or deleting a protected branch by hand also needs manage-grants."""
    guard = guard_of(request)
    if guard is not None and guard.protected(request, name):
        try:
            guard.require(request, Privilege.MANAGE_GRANTS, name, None)
        except Forbidden:
            raise Forbidden(f"Branch '{name}' is protected: {what} it needs the "
                            "'manage-grants' privilege as well") from None


@router.get("/config")
def nessie_config(request: Request) -> Response:
    return json_response({
        "defaultBranch": DEFAULT_BRANCH, "minSupportedApiVersion": 2,
        "maxSupportedApiVersion": 2, "actualApiVersion": 2, "specVersion": "2.2.0",
        "noAncestorHash": NO_ANCESTOR})


# References per page when the caller does not say (Nessie's TreeService
# uses 250 as its page size too); at most 1000 (store.refs.MAX_PAGE).
DEFAULT_REFS_PAGE = 250


@router.get("/trees")
def list_references(request: Request, page_token: VersioningPageToken = None,
                    max_records: MaxRecords = None,
                    prefix: str | None = Query(None, max_length=256),
                    fetch: str | None = None, nessie_token: NessiePageToken = None,
                    nessie_max: NessieMaxRecords = None, cel: NessieFilter = None) -> Response:
    """References in name order, ``DEFAULT_REFS_PAGE`` at a time unless
    ``maxRecords`` says (``hasMore``/``token`` for the next page: nothing is
    cut silently); ``prefix`` keeps the names that start with it;
    ``fetch=ALL`` adds each head's commit metadata. References the caller
    may not read are skipped before paging; the token is sealed (api.paging)."""
    check_fetch(fetch)
    if cel is not None:  # never answered as if every reference matched
        raise bad_request("'filter' (a CEL expression) is not supported when listing "
                          "references: use 'prefix' (the log and entries take a filter: "
                          "docs/versioning-api.md)")
    paging, refs, token = references_page(request, prefix, page_token, max_records,
                                          nessie_token, nessie_max)
    heads = versioning_of(request).head_commits(r.hash for r in refs) if fetch == "ALL" else {}
    out = []
    for r in refs:
        item = reference_json(r)
        if r.hash in heads:
            item["metadata"] = head_metadata(request, RefSpec(name=r.name), heads[r.hash])
        out.append(item)
    return json_response(page_json("references", out, paging.seal(token)))


def check_fetch(fetch: str | None) -> None:
    if fetch not in (None, "MINIMAL", "ALL"):
        raise bad_request(f"Invalid fetch option {fetch!r}: expected MINIMAL or ALL")


def head_metadata(request: Request, spec: RefSpec, head: Commit) -> dict[str, Any]:
    """``fetch=ALL``'s ``metadata`` of a reference: its head commit, whose
    message, authors and properties only a reader of the whole reference
    sees (api.v2.redact.commit_meta)."""
    guard = guard_of(request)
    readable = guard.key_filter(request, spec) if guard is not None else None
    return {"commitMetaOfHEAD": commit_meta_json(head, readable)}


def references_page(request: Request, prefix: str | None, page_token: str | None,
                    max_records: int | None, nessie_token: str | None,
                    nessie_max: int | None) -> tuple[Paging, list[Reference], str | None]:
    """One page of the references the caller may read, as ``/api/v2/trees``
    and ``/api/v2/retention/cutoffs`` list them (a token of one is good for
    the other: the same listing)."""
    paging = Paging(request, "references", {"prefix": prefix or ""}, page_token, max_records,
                    nessie_token, nessie_max)
    guard = guard_of(request)
    readable = guard.ref_filter(request) if guard is not None else None
    page = versioning_of(request).references(paging.cursor, paging.size or DEFAULT_REFS_PAGE,
                                             prefix or None, readable)
    return paging, page.items, page.next_token


@router.post("/trees")
def create_reference(request: Request, body: ReferenceBody, name: str = Query(...),
                     type: str = Query("BRANCH")) -> Response:
    """Create ``name`` at the source reference given in the body (its hash, if
    given, must be what that reference points at or one of its commits)."""
    kind = ref_type(type) or RefType.BRANCH
    source = body.spec() or DEFAULT_BRANCH
    require(request, Privilege.READ, source)  # the new ref shows all of the source
    answer = answering(request, _reference_answer)
    return answer(versioning_of(request).create_reference(name, kind, source,
                                                          principal(request), once_of(request)))


@router.get("/trees/{ref}")
async def get_reference(request: Request, ref: str, fetch: str | None = None) -> Response:
    """The reference (or commit) ``ref`` names; ``fetch=ALL`` adds its
    commit's metadata, as the listing does. A client reads a branch's head
    before each create, assign, delete or merge: a bare name without
    ``fetch=ALL`` is read inline where reads are local (as Call.read does),
    anything else in the thread pool."""
    check_fetch(fetch)
    spec = ref_param(ref)
    if fetch is None and spec.is_plain and services_of(request).local_reads:
        return _get_reference(request, spec, fetch)
    return await run_in_threadpool(_get_reference, request, spec, fetch)


def _get_reference(request: Request, spec: RefSpec, fetch: str | None) -> Response:
    refs = versioning_of(request)
    resolved = refs.resolve(spec)
    out = effective_json(resolved)
    if fetch == "ALL":
        head = refs.head_commits([resolved.hash])[resolved.hash]
        out["metadata"] = head_metadata(request, spec, head)
    return json_response({"reference": out})


@router.put("/trees/{ref}")
def assign_reference(request: Request, ref: str, body: ReferenceBody,
                     type: str | None = None) -> Response:
    name, expected = name_and_hash(ref, "Assigning a reference")
    target = body.spec()
    if not target:
        raise bad_request("Assigning a reference needs a target hash or reference in the body")
    require(request, Privilege.READ, target)
    require_on_protected(request, name, "assigning")
    answer = answering(request, _reference_answer)
    return answer(versioning_of(request).assign_reference(
        name, expected, target, principal(request), ref_type(type), once_of(request)))


@router.delete("/trees/{ref}")
def delete_reference(request: Request, ref: str, type: str | None = None) -> Response:
    name, expected = name_and_hash(ref, "Deleting a reference")
    require_on_protected(request, name, "deleting")
    answer = answering(request, _reference_answer)
    return answer(versioning_of(request).delete_reference(
        name, expected, principal(request), ref_type(type), once_of(request)))


def _reference_answer(ref: Reference) -> Response:
    return json_response({"reference": reference_json(ref)})
