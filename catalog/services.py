"""The catalog's operations over one store and one warehouse, built once:
what the HTTP server holds for its lifetime (its only way to the store),
and what a test or a tool calls directly.

``CatalogServices.seeing`` is the same for one caller: every object built
over the catalog again, over a store whose hash prefixes name only the
commits that caller may see (the API binds a request to it; the principal
reaches the store as that argument)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from catalog.access import Access
from catalog.delegation.service import StorageAccess
from catalog.delegation.settings import DelegationSettings
from catalog.feed.webhooks import WebhookService
from catalog.health import Health
from catalog.imports.runs import Imports
from catalog.kernel import Catalog
from catalog.maintenance.admin import Maintenance
from catalog.maintenance.liveness import Liveness
from catalog.metadata.files import open_files
from catalog.mviews.mviews import MaterializedViews
from catalog.namespaces import Namespaces
from catalog.settings import CatalogSettings
from catalog.tables import Tables
from catalog.versioning import Versioning
from catalog.views.invalidation import check_schema_changes
from catalog.views.views import Views
from store import Store
from store.db import shown_url


@dataclass(frozen=True, slots=True)
class CatalogServices:
    catalog: Catalog
    namespaces: Namespaces
    tables: Tables
    views: Views
    mviews: MaterializedViews
    storage: StorageAccess
    webhooks: WebhookService
    versioning: Versioning
    access: Access
    health: Health
    maintenance: Maintenance
    imports: Imports
    # Whether a read at a head is local file access (SQLite), which a caller
    # may run inline (Catalog.local_reads).
    local_reads: bool

    def seeing(self, sees: Callable[[str], bool]) -> CatalogServices:
        """These services for one caller: a hash prefix names only the
        commits ``sees`` accepts (catalog.kernel.Catalog.seeing). What no
        hash reaches (storage access, webhooks, auth data, health,
        maintenance, imports) is shared."""
        return _over(self.catalog.seeing(sees), self.storage, self.webhooks, self.access,
                     self.health, self.maintenance, self.imports)

    def close(self) -> None:
        """Close the store's connections (the services are not used again)."""
        self.catalog.store.close()


def open_services(store: Store, settings: CatalogSettings,
                  files_cache_bytes: int | None = None) -> CatalogServices:
    files = open_files(settings, files_cache_bytes)
    catalog = Catalog(store, files, files.reader.locations)
    storage = StorageAccess(DelegationSettings.from_env(), settings.warehouse,
                            Liveness(store, files))
    return _over(catalog, storage, WebhookService(catalog), Access(store), Health(catalog),
                 Maintenance(catalog), Imports(catalog))


def open_catalog(settings: CatalogSettings, files_cache_bytes: int | None = None,
                 cache_bytes: int | None = None) -> CatalogServices:
    """The services over the database ``settings`` names, opened (created or
    upgraded first, store.migrate); ``cache_bytes``: what the store's object
    caches may hold."""
    store = Store(settings.database_url, cache_bytes=cache_bytes)
    return open_services(store, settings, files_cache_bytes)


def prepare_database(url: str) -> str:
    """Create or upgrade the database's schema once, before a server's
    workers open it; returns its URL as it may be shown (no password)."""
    Store(url).close()
    return shown_url(url)


def _over(catalog: Catalog, storage: StorageAccess, webhooks: WebhookService, access: Access,
          health: Health, maintenance: Maintenance, imports: Imports) -> CatalogServices:
    """Every object that resolves references, built over ``catalog``."""
    mviews = MaterializedViews(catalog)
    return CatalogServices(catalog, Namespaces(catalog),
                           Tables(catalog, check_schema_changes, mviews),
                           Views(catalog, mviews), mviews, storage, webhooks,
                           Versioning(catalog), access, health, maintenance, imports,
                           catalog.local_reads)
