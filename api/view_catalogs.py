"""A view as the engine's catalog that loads it should read it, and the
engine's catalog name recorded on the versions it writes (the rule:
core/sql/catalog_names.py; how the server learns the name: the prefix config
hands out, api/routes/config.py).

* loadView serves each version with ``default-catalog`` the loading catalog's
  name (or none), its own-catalog names requalified, and, to a catalog that
  named itself, the Trino and DuckDB SQL it lacks derived from its Spark SQL
  (core/sql/derived.py: served, never stored);
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
import threading
from collections.abc import Callable
from functools import lru_cache

from fastapi import Response
from pyiceberg.view.metadata import ViewVersion

from api.answers import loaded_json
from catalog.commands import Loaded, NewView, ViewCommit
from core.sql.catalog_names import ENGINE_CATALOG, metadata_for, needs_serving
from core.sql.derived import SQLGLOT, as_written, metadata_with_derived
from core.views import AddViewVersion

# What a loading catalog is served, by (metadata file, catalog): the files
# are immutable, so a loadView after the first is this dictionary look-up on
# the event loop (bench/rest_bench.py loadview), never sqlglot's work again.
_KEPT: dict[tuple[str, str | None], Loaded] = {}
_KEPT_SIZE = 2_000
_LOCK = threading.Lock()
# In the served answer's key (its ETag): a rule or sqlglot that serves
# otherwise must not answer 304 to what an earlier one served.
_RULE = f"served-4:sqlglot-{SQLGLOT}"


def kept(loaded: Loaded, catalog: str | None) -> Loaded | None:
    """What ``catalog`` was served of this file before, if anything."""
    return None if loaded.cache_key is None else _KEPT.get((loaded.cache_key, catalog))


def may_differ(loaded: Loaded, catalog: str | None) -> bool:
    """Whether serving may change the stored metadata (cheap, may say yes
    when it does not): a named catalog, a stamped version, Spark SQL."""
    return needs_serving(loaded.metadata, catalog) or (
        catalog is not None and b'"spark"' in loaded.metadata)


@lru_cache(maxsize=1024)
def _served(metadata: bytes, catalog: str | None) -> bytes | None:
    stored = json.loads(metadata)
    served = metadata_for(stored, catalog)
    # Derived dialects go only to a catalog that named itself (the documented
    # engine configuration, docs/trino/iceberg.properties): any other client
    # (Spark, PyIceberg, the REST Compatibility Kit) is served the view's
    # representations exactly as they were written, as the REST spec has a
    # load return what a create or replace sent (the kit checks it).
    if catalog is not None:
        served = metadata_with_derived(served)
    if served == stored:
        return None
    return json.dumps(served, separators=(",", ":")).encode()


def served_for(loaded: Loaded, catalog: str | None) -> Loaded:
    """``loaded`` as the catalog named ``catalog`` (None: not said) reads it:
    names for that catalog (core/sql/catalog_names.py), and the dialects
    the versions lack derived (core/sql/derived.py)."""
    metadata = _served(loaded.metadata, catalog)
    if metadata is None:
        out = loaded
    else:
        key = (None if loaded.cache_key is None
               else f"{loaded.cache_key}|{catalog or ''}|{_RULE}")
        out = dataclasses.replace(loaded, metadata=metadata, cache_key=key)
    if loaded.cache_key is not None:
        with _LOCK:
            if len(_KEPT) >= _KEPT_SIZE:
                _KEPT.pop(next(iter(_KEPT)), None)
            _KEPT[(loaded.cache_key, catalog)] = out
    return out


def served_json(catalog: str | None) -> Callable[[Loaded], Response]:
    """How a create, replace or register answers: with the view as a load
    through the same catalog serves it (same body, same ETag)."""
    return lambda loaded: loaded_json(served_for(loaded, catalog))


def stamped_create(command: NewView, catalog: str | None) -> NewView:
    """The version as the engine wrote it (core/sql/derived.as_written), its
    catalog's name recorded when it has none."""
    version = stamped_version(command.version, catalog)
    return command if version is command.version else dataclasses.replace(
        command, version=version)


def stamped_commit(command: ViewCommit, catalog: str | None) -> ViewCommit:
    return dataclasses.replace(command, updates=tuple(
        u.model_copy(update={"view_version": stamped_version(u.view_version, catalog)})
        if isinstance(u, AddViewVersion) else u for u in command.updates))


def stamped_version(version: ViewVersion, catalog: str | None) -> ViewVersion:
    version = as_written(version)
    if catalog is not None and not version.default_catalog:
        version = version.model_copy(update={
            "default_catalog": catalog,
            "summary": {**(version.summary or {}), ENGINE_CATALOG: catalog}})
    return version
