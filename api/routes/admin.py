"""Administration over HTTP: garbage collection (``POST /api/v2/admin/gc``),
the integrity check (``GET /api/v2/admin/fsck``) and a Nessie repository's
import (``POST /api/v2/admin/import``), the same as ``sapwood gc``,
``sapwood fsck [--files]`` and ``sapwood import --from-nessie``
(docs/operations.md, docs/migrating-from-nessie.md). Need ``manage-grants``
on every reference when authentication is on."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from api.deps import json_response, services_of
from api.unused import takes_body
from api.v2.admin_requests import from_query, gc_options, import_request
from catalog.maintenance.gc import MIN_WRITE_WINDOW_S
from catalog.maintenance.reports import fsck_json, gc_json
from core.retention import MAX_GRACE_S

router = APIRouter(prefix="/api/v2/admin")


@router.post("/gc")
@takes_body  # the same options as JSON (api.v2.admin_requests)
async def run_gc(request: Request, dry_run: bool | None = Query(None, alias="dryRun"),
                 grace_seconds: float | None = Query(None, alias="graceSeconds", ge=0,
                                                    le=MAX_GRACE_S, allow_inf_nan=False),
                 window_seconds: float | None = Query(None, alias="writeWindowSeconds",
                                                     ge=MIN_WRITE_WINDOW_S, le=MAX_GRACE_S,
                                                     allow_inf_nan=False),
                 ) -> Response:
    """Options from the query string or a JSON body (a body it cannot use,
    or one that contradicts the query, is a 400 and nothing runs)."""
    options = gc_options(from_query(dry_run, grace_seconds, window_seconds),
                         await request.body(), request.headers.get("content-type"))
    store_report, files_report = await run_in_threadpool(
        services_of(request).maintenance.gc, options.grace_seconds, options.window_seconds,
        bool(options.dry_run))
    return json_response(gc_json(store_report, files_report))


@router.get("/fsck")
async def run_fsck(request: Request, files: bool = False,
                   grace_seconds: float | None = Query(None, alias="graceSeconds", ge=0,
                                                      le=MAX_GRACE_S)) -> Response:
    """200 with what was checked and every problem found; ``ok`` says
    whether there was none."""
    store_report, files_report = await run_in_threadpool(
        services_of(request).maintenance.fsck, files, grace_seconds)
    return json_response(fsck_json(store_report, files_report))


@router.post("/import")
@takes_body  # its options as JSON (api.v2.admin_requests.ImportRequest)
async def run_import(request: Request) -> Response:
    """200 with the import's report (what ``sapwood import --report`` writes);
    a refusal is a 400 whose message lists the first problems, nothing written."""
    sent = import_request(await request.body(), request.headers.get("content-type"))
    report = await run_in_threadpool(
        lambda: services_of(request).imports.from_nessie(
            sent.from_nessie, into_nonempty=sent.into_nonempty, batch_size=sent.batch_size))
    return json_response(report.to_json())
