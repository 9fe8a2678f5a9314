"""Versioning API: entries, contents and diffs at any reference spec."""

from __future__ import annotations

from functools import partial
from typing import Annotated
from urllib.parse import unquote

from fastapi import APIRouter, Query, Request, Response

from api.auth.guard import guard_of
from api.deps import (
    MaxRecords,
    NessieMaxRecords,
    NessiePageToken,
    VersioningPageToken,
    json_response,
    services_of,
)
from api.paging import Paging
from api.paths import ref_param
from api.routes.trees import versioning_of
from api.v2 import nessie as nessie_client
from api.v2.filtered import NessieFilter, entries_filter, filtered_entries
from api.v2.keyrange import KeyRanges
from api.v2.redact import Readable
from api.v2.requests import ContentsBody
from api.v2.shapes import (
    content_json,
    diff_json,
    effective_json,
    entry_json,
    key_json,
    page_json,
)
from core.auth import Privilege
from core.errors import ContentNotFoundError, bad_request
from core.keys import ContentKey
from core.numbers import INT64_MAX
from core.refs import RefSpec

router = APIRouter(prefix="/api/v2/trees")


@router.get("/{ref}/entries")
def entries(request: Request, ref: str, keys: KeyRanges,
            page_token: VersioningPageToken = None,
            max_records: MaxRecords = None, nessie_token: NessiePageToken = None,
            nessie_max: NessieMaxRecords = None,
            prefix_key: str | None = Query(None, alias="prefixKey"),
            depth: int | None = Query(None, ge=1, le=INT64_MAX),
            content: bool = False, cel: NessieFilter = None) -> Response:
    """Keys at the ref, in key order; ``prefixKey`` keeps those below a
    namespace, ``depth`` those at most that many levels below it (1: its
    children; the walk skips deeper subtrees, so a page costs the same
    whatever lies below), ``content=true`` adds each value, Nessie's
    ``filter`` (CEL: api.v2.filtered) keeps those it accepts, and Nessie's
    ``key``, ``min-key``, ``max-key`` and ``prefix-key`` those they name."""
    compiled = entries_filter(cel)  # before anything is read: a 400 naming what is wrong
    refs = versioning_of(request)
    spec = ref_param(ref)
    # Keys the caller may not read are skipped before paging, and the
    # token is sealed for the caller and this listing (api.paging).
    paging = Paging(request, "entries", {"ref": ref, "prefixKey": prefix_key, "depth": depth,
                                         "filter": cel, **keys.sealed()},
                    page_token, max_records, nessie_token, nessie_max)
    resolved = refs.resolve(spec)
    guard = guard_of(request)
    visible = keys.within(guard.key_filter(request, spec) if guard is not None else None)
    nessie = nessie_client.strict(request)
    listing = partial(refs.entries, f"@{resolved.hash}", ContentKey.parse(prefix_key)
                      if prefix_key else None, depth=depth, visible=visible,
                      types=nessie_client.SHOWN if nessie else None)
    if compiled is not None:  # hidden keys were skipped before it sees any
        page = filtered_entries(listing, compiled, paging.cursor, paging.size, content,
                                partial(refs.contents, f"@{resolved.hash}"))
    else:
        page = listing(page_token=paging.cursor, page_size=paging.size, with_content=content)
    out = page_json("entries", [entry_json(e, visible, nessie) for e in page.items],
                    paging.seal(page.next_token))
    out["effectiveReference"] = effective_json(resolved)
    return json_response(out)


# Nessie's: whether the caller means to write the keys (then it needs write on
# them), and whether to add documentation (Sapwood keeps none: nothing to add).
ForWrite = Annotated[bool, Query(alias="for-write")]
WithDoc = Annotated[bool, Query(alias="with-doc")]


def _for_write(request: Request, spec: RefSpec, keys: list[ContentKey]) -> None:
    guard = guard_of(request)
    if guard is not None:
        for k in keys:
            guard.require(request, Privilege.WRITE, spec, k.elements)


@router.get("/{ref}/contents/{key}")
def get_content(request: Request, ref: str, key: str, for_write: ForWrite = False,
                with_doc: WithDoc = False) -> Response:
    if for_write:
        _for_write(request, ref_param(ref), [ContentKey.parse(key)])
    resolved, found = services_of(request).catalog.read(ref_param(ref), [ContentKey.parse(key)])
    if not found:
        raise ContentNotFoundError(f"key '{ContentKey.parse(key)}' does not exist at "
                                   f"'{unquote(ref)}'")
    (value,) = found.values()
    if nessie_client.strict(request):
        nessie_client.refuse_unshown(found)
    return json_response({"content": content_json(value, _readable(request, ref_param(ref)),
                                                  ContentKey.parse(key),
                                                  nessie_client.strict(request)),
                          "effectiveReference": effective_json(resolved)})


def _readable(request: Request, spec: RefSpec) -> Readable | None:
    guard = guard_of(request)
    return None if guard is None else guard.key_filter(request, spec)


def _contents(request: Request, ref: str, keys: list[ContentKey]) -> Response:
    spec = ref_param(ref)
    guard = guard_of(request)
    if guard is not None:
        for k in keys:
            guard.require(request, Privilege.READ, spec, k.elements)
    resolved, found = services_of(request).catalog.read(spec, keys)
    readable = _readable(request, spec)
    nessie = nessie_client.strict(request)
    if nessie:
        nessie_client.refuse_unshown(found)
    return json_response({
        "contents": [{"key": key_json(k), "content": content_json(c, readable, k, nessie)}
                     for k, c in found.items()],
        "effectiveReference": effective_json(resolved)})


@router.get("/{ref}/contents")
def get_contents(request: Request, ref: str,
                 key: Annotated[list[str] | None, Query()] = None,
                 for_write: ForWrite = False, with_doc: WithDoc = False) -> Response:
    keys = [ContentKey.parse(k) for k in key or []]
    if for_write:
        _for_write(request, ref_param(ref), keys)
    return _contents(request, ref, keys)


@router.post("/{ref}/contents")
def post_contents(request: Request, ref: str, body: ContentsBody,
                  for_write: ForWrite = False, with_doc: WithDoc = False) -> Response:
    keys = [k.key() for k in body.requested_keys]
    if for_write:
        _for_write(request, ref_param(ref), keys)
    return _contents(request, ref, keys)


@router.get("/{from_ref}/diff/{to_ref}")
def diff(request: Request, from_ref: str, to_ref: str, keys: KeyRanges,
         page_token: VersioningPageToken = None, max_records: MaxRecords = None,
         nessie_token: NessiePageToken = None, nessie_max: NessieMaxRecords = None,
         cel: NessieFilter = None) -> Response:
    """The keys whose values differ between two refs, in key order; Nessie's
    ``key``, ``min-key``, ``max-key`` and ``prefix-key`` keep those they name
    (a page may then hold fewer, even none, with a token to go on)."""
    if cel is not None:
        raise bad_request("The 'filter' parameter (CEL) is not supported on a diff: use key, "
                          "prefix-key, min-key or max-key")
    paging = Paging(request, "diff", {"from": from_ref, "to": to_ref, **keys.sealed()},
                    page_token, max_records, nessie_token, nessie_max)
    refs = versioning_of(request)
    to_spec = ref_param(to_ref)
    guard = guard_of(request)
    if guard is not None:
        guard.require(request, Privilege.READ, to_spec, None)
    a, b = refs.resolve(ref_param(from_ref)), refs.resolve(to_spec)
    page = refs.diff(f"@{a.hash}", f"@{b.hash}", paging.cursor, paging.size)
    nessie = nessie_client.strict(request)
    kept = keys.within(None)
    out = page_json("diffs", [diff_json(d, nessie) for d in page.items
                              if (kept is None or kept(d.key.elements)) and
                              (not nessie or (nessie_client.shown(d.before)
                                              and nessie_client.shown(d.after)))],
                    paging.seal(page.next_token))
    out["effectiveFromReference"] = effective_json(a)
    out["effectiveToReference"] = effective_json(b)
    return json_response(out)
