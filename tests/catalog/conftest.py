"""The catalog layer called directly, in process, on SQLite and PostgreSQL:
a store and a warehouse of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.services import CatalogServices, open_services
from catalog.settings import CatalogSettings
from store import Store


@pytest.fixture
def services(store: Store, tmp_path: Path) -> CatalogServices:
    warehouse = (tmp_path / "warehouse").resolve()
    warehouse.mkdir()
    return open_services(store, CatalogSettings(store.db.url, warehouse.as_uri()))
