"""The FastAPI application: Iceberg REST routes over one store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

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
                                      Views(catalog))
        try:
            yield
        finally:
            store.close()

    app = FastAPI(title="Sapwood", lifespan=lifespan, openapi_url="/openapi.json",
                  docs_url="/docs", redoc_url=None)
    errors.install(app)
    for r in (config.router, namespaces.router, tables.router, views.router):
        app.include_router(r)
    return RefPaths(app)


def app_from_env() -> Any:
    """Factory for uvicorn workers: settings from SAPWOOD_* variables."""
    return create_app(Settings.resolve())
