"""The FastAPI application: Iceberg REST routes over one store."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

from api import errors
from api.catalog.files import Locations, MetadataFiles
from api.catalog.namespaces import Namespaces
from api.catalog.service import Catalog
from api.catalog.tables import Tables
from api.catalog.views import Views
from api.deps import Services
from api.paths import RefPaths
from api.routes import config, namespaces, tables, views
from api.settings import Settings


def create_app(settings: Settings) -> Any:
    """The ASGI application (FastAPI wrapped in the path-folding middleware)."""
    from store import Store

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = Store(settings.database_url)
        catalog = Catalog(store, MetadataFiles(),
                          Locations(settings.warehouse, settings.allow_external_locations))
        app.state.services = Services(catalog, Namespaces(catalog), Tables(catalog),
                                      Views(catalog), inline_reads=store.db.dialect == "sqlite")
        # Everything imported and built so far lives as long as the process:
        # keep it out of the collector's generations, so collections triggered
        # by requests only scan what requests allocate.
        gc.freeze()
        try:
            yield
        finally:
            store.close()

    app = FastAPI(title="Sapwood", lifespan=lifespan, openapi_url="/openapi.json",
                  docs_url="/docs", redoc_url=None)
    errors.install(app)
    for router in (config.router, namespaces.router, tables.router, views.router):
        _add_flat(app, router)
    return RefPaths(app)


def _add_flat(app: FastAPI, router: APIRouter) -> None:
    """Each resource keeps its own router; the app gets their routes directly.
    (An included router is matched as a nested router, which cost about a
    tenth of a read's time in bench/rest_bench.py.)"""
    for route in router.routes:
        assert isinstance(route, APIRoute)
        app.add_api_route(route.path, route.endpoint, methods=sorted(route.methods),
                          status_code=route.status_code, name=route.name)


def app_from_env() -> Any:
    """Factory for uvicorn workers: settings from SAPWOOD_* variables."""
    return create_app(Settings.resolve())
