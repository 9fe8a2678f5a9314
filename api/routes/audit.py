"""Versioning API: the view audit (``/api/v2/trees/{ref}/views/{key}/history``)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request, Response

from api.auth.guard import guard_of
from api.deps import MaxRecords, json_response
from api.paths import ref_param
from api.v2 import redact
from api.v2.shapes import view_history_json
from catalog.audit import view_history
from core.instants import parse_instant, to_micros
from core.keys import ContentKey

router = APIRouter(prefix="/api/v2/trees")


@router.get("/{ref}/views/{key}/history")
def audit_view(request: Request, ref: str, key: str, since: str | None = None,
               until: str | None = None,
               page_token: str | None = Query(None, alias="pageToken"),
               max_records: MaxRecords = None) -> Response:
    """The versions the view has had on the ref, oldest first, a page at a
    time (``maxRecords``, default 100; ``pageToken`` from ``token``); ``since``
    and ``until`` (instants) keep the versions current at some point between."""
    catalog = request.app.state.services.catalog
    spec = ref_param(ref)
    page = view_history(
        catalog, spec, ContentKey.parse(key),
        to_micros(parse_instant(since)) // 1000 if since else None,
        to_micros(parse_instant(until)) // 1000 if until else None, page_token, max_records)
    guard = guard_of(request)
    readable = guard.key_filter(request, spec) if guard is not None else None
    return json_response(redact.audit(view_history_json(redact.history(page, readable)),
                                      readable))
