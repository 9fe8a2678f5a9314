"""Versioning API: which views hold, at any ref, hash or instant.

``GET /api/v2/trees/{ref}/views?status=invalid`` checks every view's recorded
dependencies against what that commit holds (lenient invalidation: a base
may change; the views it breaks are reported, each with its reasons)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from api.auth.guard import guard_of
from api.deps import json_response
from api.paths import ref_param
from api.routes.view_graph import primary
from api.v2 import redact
from api.v2.shapes import effective_json
from catalog.analysis import Resolver
from catalog.service import Catalog
from core.content import ContentType
from core.errors import bad_request
from core.sql.validity import reasons
from store import Store

router = APIRouter(prefix="/api/v2/trees")
STATUSES = ("ok", "invalid", "unanalysed")


def view_statuses(catalog: Catalog, ref: str, readable: redact.Readable | None = None,
                  ) -> tuple[Any, list[dict[str, Any]]]:
    """Every view at ``ref`` with its status now and the reasons (one
    neutral reason for a view that reads what ``readable`` hides)."""
    store: Store = catalog.store
    resolved = store.resolve(ref_param(ref))
    at = f"@{resolved.hash}"
    resolve = Resolver(catalog, at)
    entries = []
    token = None
    while True:
        page = store.entries(at, None, page_token=token, page_size=1000, with_content=True)
        entries += page.items
        token = page.next_token
        if not token:
            break
    # Where each object is now, by content id: a base renamed since is named
    # as renamed, not as dropped.
    where = {e.content_id: e.key.elements for e in entries if e.content_id}
    out = []
    for e in entries:
        if e.type not in (ContentType.ICEBERG_VIEW, ContentType.MATERIALIZED_VIEW):
            continue
        a = primary(e.content)  # type: ignore[arg-type]
        if a is None or a.status == "unanalysed":
            status = "unanalysed"
            why = a.reasons if a else ["written before analysis existed"]
        else:
            why = reasons(a, resolve, where.get)
            status = "invalid" if why else "ok"
        if why and redact.reads_hidden(a.model_dump(by_alias=True) if a else None, readable):
            why = [redact.HIDDEN_REASON]
        out.append({"key": list(e.key.elements), "contentId": e.content_id,
                    "type": e.type.value, "status": status, "reasons": why,
                    "dialect": a.dialect if a else None})
    return resolved, out


@router.get("/{ref}/views")
async def list_views_by_status(request: Request, ref: str,
                               status: str = Query("all")) -> Response:
    if status not in (*STATUSES, "all"):
        raise bad_request(f"Invalid status {status!r}: expected one of "
                          f"{', '.join(STATUSES)} or all")
    catalog = request.app.state.services.catalog
    guard = guard_of(request)
    visible = guard.key_filter(request, ref_param(ref)) if guard is not None else None
    resolved, views = await run_in_threadpool(view_statuses, catalog, ref, visible)
    views = [v for v in views if (status == "all" or v["status"] == status)
             and (visible is None or visible(tuple(v["key"])))]
    return json_response({"views": views, "effectiveReference": effective_json(resolved)})
