"""Administration over HTTP: garbage collection (``POST /api/v2/admin/gc``)
and the integrity check (``GET /api/v2/admin/fsck``), the same as ``sapwood
gc`` and ``sapwood fsck [--files]`` (docs/operations.md). Need
``manage-grants`` on every reference when authentication is on."""

from __future__ import annotations

import os

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from api.deps import json_response
from api.unused import takes_body
from api.v2.admin_requests import from_query, gc_options
from catalog.kernel import Catalog
from catalog.maintenance.fsck_files import FilesCheck, check_files
from catalog.maintenance.gc import MIN_WRITE_WINDOW_S, collect_all
from catalog.maintenance.reports import fsck_json, gc_json
from core.retention import DEFAULT_GRACE_S, MAX_GRACE_S
from store.fsck import FsckReport, fsck

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
    catalog: Catalog = request.app.state.services.catalog
    store_report, files_report = await run_in_threadpool(
        collect_all, catalog.store, catalog.files, catalog.locations.warehouse,
        options.grace_seconds, options.window_seconds, bool(options.dry_run))
    return json_response(gc_json(store_report, files_report))


@router.get("/fsck")
async def run_fsck(request: Request, files: bool = False,
                   grace_seconds: float | None = Query(None, alias="graceSeconds", ge=0,
                                                      le=MAX_GRACE_S)) -> Response:
    """200 with what was checked and every problem found; ``ok`` says
    whether there was none."""
    catalog: Catalog = request.app.state.services.catalog
    store_report, files_report = await run_in_threadpool(_fsck, catalog, files, grace_seconds)
    return json_response(fsck_json(store_report, files_report))


def _fsck(catalog: Catalog, files: bool, grace_s: float | None,
          ) -> tuple[FsckReport, FilesCheck | None]:
    report = fsck(catalog.store)
    if not files:
        return report, None
    grace = grace_s if grace_s is not None else \
        float(os.environ.get("SAPWOOD_GC_GRACE_S", DEFAULT_GRACE_S))
    return report, check_files(catalog.store, catalog.files, catalog.locations.warehouse,
                               grace)
