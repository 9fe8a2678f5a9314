"""Catalog names are the engine's, references are Sapwood's: a view's SQL as
the engine that loads it should read it.

A view version's ``default-catalog`` is the name the writing engine gave the
catalog it wrote through (Trino's ``iceberg``, Spark's ``sw``); another engine,
or the same engine through a catalog on another reference (``iceberg_dev`` on
branch ``dev``), names it otherwise. Served as stored, Trino reads a branch's
view through the catalog named in it, that is another reference's tables
(issue 49). So a loaded view is served for the catalog that loads it:

* its ``default-catalog`` is the loading catalog's name when the engine said
  it (``warehouse`` in its configuration: api/routes/config.py); otherwise
  a name the server recorded (``ENGINE_CATALOG``) is left out (Iceberg's
  Spark then resolves in the catalog it loaded the view from), and a name a
  client wrote itself is served as written;
* a table name whose catalog part is the stored ``default-catalog`` (the
  writer's "this catalog") names the loading catalog instead, or loses its
  catalog part; any other catalog part is kept (an explicit other catalog).

Pure: metadata and SQL in, metadata and SQL out (sqlglot does the SQL).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

# A catalog name an engine may send (Trino's and Spark's identifiers).
CATALOG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# In a version's summary: the ``default-catalog`` the server recorded for an
# engine that named its catalog and wrote the version with none (Trino).
ENGINE_CATALOG = "sapwood.engine-catalog"


@lru_cache(maxsize=4096)
def requalify(sql: str, dialect: str, stored: str, loading: str | None) -> str:
    """``sql`` with every table named in catalog ``stored`` named in
    ``loading`` (None: no catalog part); the text unchanged when no name
    changes or sqlglot cannot read it (the engine will say what it cannot)."""
    if stored.lower() not in sql.lower():
        return sql
    try:
        tree = parse_one(sql, read=dialect or None)
    except (SqlglotError, ValueError):
        return sql
    changed = False
    for table in tree.find_all(exp.Table):
        if table.catalog and table.catalog.lower() == stored.lower():
            table.set("catalog", exp.to_identifier(loading) if loading else None)
            changed = True
    return tree.sql(dialect=dialect or None) if changed else sql


def version_for(version: dict[str, Any], loading: str | None) -> dict[str, Any]:
    """One view version as the catalog named ``loading`` (None: unknown)
    should read it. To a catalog that did not name itself, a version is
    served as written unless its ``default-catalog`` is one the server
    recorded (ENGINE_CATALOG: an engine that named its catalog wrote it
    with none): the REST spec has a load return what was sent, and the
    compatibility kit checks a client's own ``default-catalog`` comes back."""
    stored = version.get("default-catalog")
    if loading is None and (not stored or (version.get("summary") or {}).get(
            ENGINE_CATALOG) != stored):
        return version
    out = dict(version)
    if stored:
        out["representations"] = [
            {**r, "sql": requalify(r["sql"], r.get("dialect", ""), stored, loading)}
            if r.get("type") == "sql" and isinstance(r.get("sql"), str) else r
            for r in version.get("representations", [])]
    if loading:
        out["default-catalog"] = loading
    else:
        out.pop("default-catalog", None)
    return out


def metadata_for(metadata: dict[str, Any], loading: str | None) -> dict[str, Any]:
    """View metadata with each version as ``loading`` should read it."""
    return {**metadata, "versions": [version_for(v, loading)
                                     for v in metadata.get("versions", [])]}


def needs_serving(metadata: bytes, loading: str | None) -> bool:
    """Whether the stored metadata differs from what ``loading`` should read
    (a view no version of which names a catalog, loaded by an engine that
    did not name its own, is served as stored: Spark's usual case)."""
    return loading is not None or ENGINE_CATALOG.encode() in metadata
