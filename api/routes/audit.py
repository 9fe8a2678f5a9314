"""Versioning API: the view audit (``/api/v2/trees/{ref}/views/{key}/history``)."""

from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter, Request, Response

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
from api.v2 import redact
from api.v2.shapes import view_history_json
from catalog.views.audit import view_history
from core.instants import parse_instant, to_micros
from core.keys import ContentKey

router = APIRouter(prefix="/api/v2/trees")


@router.get("/{ref}/views/{key}/history")
def audit_view(request: Request, ref: str, key: str, since: str | None = None,
               until: str | None = None,
               page_token: VersioningPageToken = None, max_records: MaxRecords = None,
               nessie_token: NessiePageToken = None,
               nessie_max: NessieMaxRecords = None) -> Response:
    """The versions the view has had on the ref, oldest first, a page at a
    time (``maxRecords``, default 100; ``pageToken`` from ``token``); ``since``
    and ``until`` (instants) keep the versions current at some point between."""
    catalog = services_of(request).catalog
    spec = ref_param(ref)
    # The token is sealed for the caller and this audit (api.paging).
    paging = Paging(request, "view-history", {"ref": ref, "key": key, "since": since,
                                              "until": until},
                    page_token, max_records, nessie_token, nessie_max)
    page = view_history(
        catalog, spec, ContentKey.parse(key),
        to_micros(parse_instant(since)) // 1000 if since else None,
        to_micros(parse_instant(until)) // 1000 if until else None, paging.cursor,
        paging.size)
    page = replace(page, token=paging.seal(page.token))
    guard = guard_of(request)
    readable = guard.key_filter(request, spec) if guard is not None else None
    return json_response(redact.audit(view_history_json(redact.history(page, readable)),
                                      readable))
