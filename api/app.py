"""The FastAPI application: the Iceberg REST catalog and the versioning API
over one store."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from api import errors
from api.auth.config import AuthSettings
from api.auth.guard import Guard
from api.auth.policy import RULES, check_complete
from api.edge import Edge
from api.hot_reads import HotReads
from api.idempotency import CheckedOnceRoute, KeyLocks, OnceRoute
from api.observe.logs import configure as configure_logs
from api.observe.metrics import Metrics
from api.routes import (
    admin,
    api_docs,
    audit,
    config,
    contents,
    events,
    grants,
    health,
    history,
    mviews,
    namespaces,
    nessie_repo,
    oauth,
    retention,
    storage,
    tables,
    trees,
    undo,
    view_graph,
    view_status,
    views,
    webhooks,
)
from api.settings import Settings
from api.ui import merge_pages as ui_merge
from api.ui import nav as ui_nav
from api.ui import object_pages as ui_objects
from api.ui import pages as ui_pages
from api.ui import undo_pages as ui_undo
from catalog.feed.webhooks import WebhookService
from catalog.services import open_catalog
from catalog.views.via_views import check_chain


def create_app(settings: Settings, auth: AuthSettings | None = None) -> Any:
    """The ASGI application (FastAPI wrapped in the path-folding middleware).
    With authentication on, every route checks its rule (api.auth.policy)."""
    auth = auth if auth is not None else AuthSettings.from_env()
    configure_logs()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The catalog is the app's only way to the store (docs/architecture.md).
        found = app.state.services = open_catalog(
            settings.catalog, settings.files_cache_bytes, settings.store_cache_bytes)
        guard = app.state.guard = Guard(found, auth) if auth.configured else None
        if guard is not None:
            views = found.views
            guard.views_check = lambda ref, chain, key, caller, grants: check_chain(
                views, ref, chain, key, caller, grants)
        app.state.metrics = metrics
        app.state.idempotency_lifetime_s = settings.idempotency_lifetime_s
        app.state.key_locks = KeyLocks()
        metrics.watch(found.health)
        # Everything imported and built so far lives as long as the process:
        # keep it out of the collector's generations, so collections triggered
        # by requests only scan what requests allocate.
        gc.freeze()
        delivering = asyncio.create_task(deliver_webhooks(found.webhooks))
        try:
            yield
        finally:
            delivering.cancel()
            found.close()

    # No Swagger UI: it loads its assets from a CDN, and its routes would be
    # matched before every request's. /openapi.json describes the routes;
    # /docs and /redoc say so (api.routes.api_docs).
    app = FastAPI(title="Sapwood", lifespan=lifespan, openapi_url="/openapi.json",
                  docs_url=None, redoc_url=None)
    errors.install(app)
    _add_flat(app, [config.router, oauth.router, namespaces.router, tables.router, storage.router,
                    views.router, trees.router, history.router, undo.router, contents.router,
                    audit.router,
                    grants.router, events.router, webhooks.router, view_graph.router,
                    view_status.router,
                    mviews.router, health.router,
                    admin.router, retention.router, api_docs.router, nessie_repo.router],
              auth.configured)
    # The web UI: its stylesheet, then pages over this same API; the UI's
    # catch-all (api.ui.nav) last, after every page and the stylesheet.
    app.mount("/ui/static", StaticFiles(directory=str(Path(ui_pages.__file__).parent / "static")),
              name="ui_static")
    _add_flat(app, [ui_pages.router, ui_objects.router, ui_merge.router, ui_undo.router,
                    ui_nav.router], auth.configured)
    # Outside FastAPI, as one plain ASGI layer, before anything else runs:
    # request id, Host check, body limit, path folding, metrics and the access
    # log (api.edge; every answer is counted, refusals included). Then the
    # requests clients send most are answered before FastAPI's routing, by
    # their routes' own functions (api.hot_reads); everything else by FastAPI.
    outer = Edge(HotReads(app, app), metrics, hosts=list(settings.allowed_hosts),
                 max_bytes=settings.max_body_bytes)
    app.state.asgi = outer  # what the UI calls the API through (api.ui.client)
    return outer


async def deliver_webhooks(service: WebhookService) -> None:
    """Each process delivers the webhooks it can claim (catalog.feed.webhooks):
    when something was committed, or a retry is due; off the event loop."""
    token: object = None
    idle = 0.0
    while True:
        await asyncio.sleep(_DELIVERY_TICK_S)
        now = service.change_token()
        idle += _DELIVERY_TICK_S
        # A commit anywhere (SQLite's change counter), else once a second: a
        # retry coming due, or PostgreSQL, which has no counter to watch.
        if (now is not None and now != token) or idle >= 1.0:
            token, idle = now, 0.0
            try:
                await run_in_threadpool(service.deliver_due)
            except Exception:
                logging.getLogger("sapwood.webhooks").exception("webhook delivery failed")


_DELIVERY_TICK_S = 0.1


def fastapi_of(asgi: Any) -> FastAPI:
    """The FastAPI application inside the layers create_app puts around it."""
    while not isinstance(asgi, FastAPI):
        asgi = asgi.app
    return asgi


def _add_flat(app: FastAPI, routers: list[APIRouter], checked: bool) -> None:
    """Each resource keeps its own router; the app gets their routes directly,
    reads first. An included router is matched as a nested router, and routes
    are tried in order; both showed in a cached read's time in
    bench/rest_bench.py. No two routes match the same path and method, so
    the order changes nothing else."""
    routes = [r for router in routers for r in router.routes if isinstance(r, APIRoute)]
    assert len(routes) == sum(len(router.routes) for router in routers)
    check_complete([r.name for r in routes])
    # The routes the policy table marks hot, first, the most often sent first.
    routes.sort(key=lambda r: (RULES[r.name].hot or len(RULES), "GET" not in (r.methods or ())))
    for route in routes:
        app.router.add_api_route(route.path, route.endpoint, methods=sorted(route.methods or ()),
                                 status_code=route.status_code, name=route.name,
                                 include_in_schema=route.include_in_schema,
                                 route_class_override=CheckedOnceRoute if checked else OnceRoute)



def app_from_env() -> Any:
    """Factory for uvicorn workers: settings from SAPWOOD_* variables."""
    return create_app(Settings.resolve())
