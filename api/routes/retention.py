"""Retention policies over HTTP: ``GET|PUT /api/v2/retention`` (the list,
replaced whole; ``manage-grants`` on every reference, api.auth.policy) and
``GET /api/v2/retention/cutoffs`` (what each reference the caller may read
retains now, a page of references at a time as ``/api/v2/trees`` lists
them). docs/operations.md, "Retention policies"."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response

from api.deps import (
    MaxRecords,
    NessieMaxRecords,
    NessiePageToken,
    VersioningPageToken,
    json_response,
    services_of,
)
from api.routes.trees import references_page
from api.v2.retention_requests import RetentionBody
from api.v2.shapes import page_json
from catalog.maintenance.retention import RefRetention
from core.instants import format_instant
from core.retention import Policy

router = APIRouter(prefix="/api/v2/retention")


def _policies_json(items: list[Policy]) -> dict[str, Any]:
    return {"policies": [p.to_json() for p in items]}


def _cutoff_json(r: RefRetention) -> dict[str, Any]:
    return {"name": r.name, "type": r.type.value,
            "policy": r.policy.to_json() if r.policy is not None else None,
            "retains": r.retains.value,
            "cutoff": format_instant(r.cutoff) if r.cutoff is not None else None}


@router.get("")
def get_retention(request: Request) -> Response:
    return json_response(_policies_json(services_of(request).maintenance.retention_policies()))


@router.put("")
def replace_retention(request: Request, body: RetentionBody) -> Response:
    """The whole list, in matching order; a list refused (400 naming the bad
    glob, duration or count) changes nothing."""
    kept = services_of(request).maintenance.replace_retention(
        [p.policy() for p in body.policies])
    return json_response(_policies_json(kept))


@router.get("/cutoffs")
def retention_cutoffs(request: Request, page_token: VersioningPageToken = None,
                      max_records: MaxRecords = None,
                      prefix: str | None = Query(None, max_length=256),
                      nessie_token: NessiePageToken = None,
                      nessie_max: NessieMaxRecords = None) -> Response:
    """Each reference's policy and cutoff, paged like ``GET /api/v2/trees``
    (same order, ``prefix``, ``pageToken``, and a token of either listing
    is good for the other); references the caller may not read are left
    out, as there."""
    paging, refs, token = references_page(request, prefix, page_token, max_records,
                                          nessie_token, nessie_max)
    cutoffs = services_of(request).maintenance.retention_cutoffs(refs)
    return json_response(page_json("references", [_cutoff_json(r) for r in cutoffs],
                                   paging.seal(token)))
