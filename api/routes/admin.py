"""Administration over HTTP: garbage collection (``POST /api/v2/admin/gc``),
the same as ``sapwood gc`` (docs/operations.md). Needs ``manage-grants`` on
every reference when authentication is on."""

from __future__ import annotations

import os
from dataclasses import asdict

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from api.catalog.gc_files import collect_files
from api.catalog.service import Catalog
from api.deps import json_response
from core.content import Content
from store.gc import DEFAULT_GRACE_S, MAX_GRACE_S, collect

router = APIRouter(prefix="/api/v2/admin")


@router.post("/gc")
async def run_gc(request: Request, dry_run: bool = Query(False, alias="dryRun"),
                 grace_seconds: float | None = Query(None, alias="graceSeconds", ge=0,
                                                    le=MAX_GRACE_S),
                 ) -> Response:
    catalog: Catalog = request.app.state.services.catalog
    grace = grace_seconds if grace_seconds is not None else \
        float(os.environ.get("SAPWOOD_GC_GRACE_S", DEFAULT_GRACE_S))
    store_report, files_report = await run_in_threadpool(_gc, catalog, grace, dry_run)
    body = {"store": {k: v for k, v in asdict(store_report).items() if k != "removed"},
            "removedCommits": store_report.removed[:1000]}
    if files_report is not None:
        body["warehouse"] = {k: v for k, v in asdict(files_report).items() if k != "removed"}
        body["removedFiles"] = files_report.removed[:1000]
    return json_response(body)


def _gc(catalog: Catalog, grace: float, dry_run: bool):  # type: ignore[no-untyped-def]
    live: list[Content] = []
    report = collect(catalog.store, grace_s=grace, dry_run=dry_run, contents=live)
    if report.aborted:
        return report, None  # a commit needed what it would remove: run again
    files = collect_files(catalog.files, catalog.locations.warehouse, live, grace, dry_run)
    if not dry_run:
        catalog.store.stats.add("gc_removed_files", files.removed_files)
    return report, files
