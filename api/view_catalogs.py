"""A view as the engine's catalog that loads it should read it, and the
engine's catalog name recorded on the versions it writes (the rule:
core/sql/catalog_names.py; how the server learns the name: the prefix config
hands out, api/routes/config.py).

* loadView serves each version with ``default-catalog`` the loading catalog's
  name (or none), its own-catalog names requalified;
* a create or replace through a catalog whose name the engine said records
  that name as the ``default-catalog`` of a version that has none (what the
  engine's names in the SQL are relative to: Trino writes
  ``iceberg_dev.sales.orders`` and no ``default-catalog``), so that the
  analysis knows ``iceberg_dev`` means this catalog, and a later reader
  through another catalog name reads the view's own ref.
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache

from catalog.commands import Loaded, NewView, ViewCommit
from core.sql.catalog_names import metadata_for
from core.views import AddViewVersion


@lru_cache(maxsize=1024)
def _served(metadata: bytes, catalog: str | None) -> bytes:
    # Metadata files are immutable, so an answer per (file, catalog) is kept.
    return json.dumps(metadata_for(json.loads(metadata), catalog),
                      separators=(",", ":")).encode()


def served_for(loaded: Loaded, catalog: str | None) -> Loaded:
    """``loaded`` as the catalog named ``catalog`` (None: not said) reads it."""
    key = None if loaded.cache_key is None else f"{loaded.cache_key}|{catalog or ''}"
    return dataclasses.replace(loaded, metadata=_served(loaded.metadata, catalog),
                               cache_key=key)


def stamped_create(command: NewView, catalog: str | None) -> NewView:
    if catalog is None or command.version.default_catalog:
        return command
    return dataclasses.replace(command, version=command.version.model_copy(
        update={"default_catalog": catalog}))


def stamped_commit(command: ViewCommit, catalog: str | None) -> ViewCommit:
    if catalog is None:
        return command
    updates = tuple(
        u.model_copy(update={"view_version": u.view_version.model_copy(
            update={"default_catalog": catalog})})
        if isinstance(u, AddViewVersion) and not u.view_version.default_catalog else u
        for u in command.updates)
    return dataclasses.replace(command, updates=updates)
