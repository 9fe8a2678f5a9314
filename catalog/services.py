"""The catalog's operations over one store and one warehouse, built once:
what the HTTP server holds for its lifetime, and what a test or a tool
calls directly."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.delegation.service import StorageAccess
from catalog.delegation.settings import DelegationSettings
from catalog.feed.webhooks import WebhookService
from catalog.kernel import Catalog
from catalog.maintenance.liveness import Liveness
from catalog.metadata.files import open_files
from catalog.mviews.mviews import MaterializedViews
from catalog.namespaces import Namespaces
from catalog.settings import CatalogSettings
from catalog.tables import Tables
from catalog.views.invalidation import check_schema_changes
from catalog.views.views import Views
from store import Store


@dataclass(frozen=True, slots=True)
class CatalogServices:
    catalog: Catalog
    namespaces: Namespaces
    tables: Tables
    views: Views
    mviews: MaterializedViews
    storage: StorageAccess
    webhooks: WebhookService


def open_services(store: Store, settings: CatalogSettings,
                  files_cache_bytes: int | None = None) -> CatalogServices:
    files = open_files(settings, files_cache_bytes)
    catalog = Catalog(store, files, files.reader.locations)
    mviews = MaterializedViews(catalog)
    storage = StorageAccess(DelegationSettings.from_env(), settings.warehouse,
                            Liveness(store, files))
    return CatalogServices(catalog, Namespaces(catalog),
                           Tables(catalog, check_schema_changes, mviews),
                           Views(catalog, mviews), mviews, storage, WebhookService(catalog))
