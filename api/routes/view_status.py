"""Versioning API: which views hold, at any ref, hash or instant.

``GET /api/v2/trees/{ref}/views?status=invalid`` gives every view's status
there (catalog.views.status: what its analysis found when it was written,
and whether what it reads still holds; lenient invalidation: a base may
change, the views it breaks are reported, each with its reasons).
``key`` (repeated) asks about those keys only (the UI flags the invalid
views of the page of entries it shows)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.auth.guard import guard_of
from api.deps import json_response, services_of
from api.paths import ref_param
from api.v2 import redact
from api.v2.shapes import effective_json, status_json
from catalog.kernel import Catalog
from catalog.views.status import listing
from core.commits import ResolvedRef
from core.errors import bad_request
from core.keys import ContentKey

router = APIRouter(prefix="/api/v2/trees")
STATUSES = ("ok", "invalid", "unanalysed")


MAX_KEYS = 1000


def view_statuses(catalog: Catalog, ref: str, readable: redact.Readable | None = None,
                  keys: list[ContentKey] | None = None,
                  ) -> tuple[ResolvedRef, list[dict[str, Any]]]:
    """Every view at ``ref`` (or those of ``keys``) with its status now and
    the reasons (one neutral reason for a view that reads what ``readable``
    hides)."""
    resolved = catalog.resolve(ref_param(ref))
    if readable is not None and keys is not None:
        keys = [k for k in keys if readable(k.elements)]
    out = []
    for k, c, st in listing(catalog, f"@{resolved.hash}", keys):
        if readable is not None and not readable(k.elements):
            continue
        out.append({"key": list(k.elements), "contentId": c.id, "type": c.type,
                    **status_json(redact.status(st, readable))})
    return resolved, out


@router.get("/{ref}/views")
async def list_views_by_status(request: Request, ref: str,
                               status: str = Query("all"),
                               key: Annotated[list[str] | None, Query()] = None,
                               ) -> Response:
    if status not in (*STATUSES, "all"):
        raise bad_request(f"Invalid status {status!r}: expected one of "
                          f"{', '.join(STATUSES)} or all")
    if key is not None and len(key) > MAX_KEYS:
        raise bad_request(f"Too many keys: {len(key)} (at most {MAX_KEYS} in one request)")
    keys = [ContentKey.parse(k) for k in key] if key is not None else None
    catalog = services_of(request).catalog
    guard = guard_of(request)
    visible = guard.key_filter(request, ref_param(ref)) if guard is not None else None
    resolved, views = await run_in_threadpool(view_statuses, catalog, ref, visible, keys)
    views = [v for v in views if status == "all" or v["status"] == status]
    return json_response({"views": views, "effectiveReference": effective_json(resolved)})
