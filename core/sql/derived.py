"""Representations served, not stored: a view version that has Spark SQL but
no Trino (or DuckDB) SQL is served with one derived by sqlglot, so every
engine we support reads a view made the Spark way (issue 49).

Served, not stored, because Iceberg's clients refuse a replace that loses a
dialect: stored, a derived ``trino`` would make Spark's next ``CREATE OR
REPLACE VIEW`` (Spark SQL only) fail with "Cannot replace view due to loss of
view dialects". So the metadata as served also says
``replace.drop-dialect.allowed=true`` when its current version carries a
derived representation; the stored metadata never holds one, so the
server's own check (core/views.py) still compares what engines wrote.

* an engine's own representation always wins (nothing is derived for a
  dialect the version has);
* each derived version's summary says so (``sapwood.derived-representations``);
  a dialect that could not be derived is left out and named, with sqlglot's
  reason, in ``sapwood.underived-dialects`` of that version's summary;
* a version sent back with what was derived (a client that copies the
  loaded version and adds its own dialect) stores it not: per dialect the
  summary names as derived, the one representation whose SQL is what sqlglot
  derives from the version's Spark SQL is dropped, with the markers.

Pure: a view version in, the version as served out (sqlglot does the SQL).
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import version as package_version
from typing import Any

from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from core.errors import InvalidInputError
from core.sql.catalog_names import ENGINE_CATALOG
from core.sql.transpile import transpile
from core.views import DROP_DIALECT_ALLOWED, sql_representations

SOURCE = "spark"
TARGETS = ("trino", "duckdb")
DERIVED = "sapwood.derived-representations"
UNDERIVED = "sapwood.underived-dialects"
SQLGLOT = package_version("sqlglot")


@lru_cache(maxsize=4096)
def derived_sql(sql: str, target: str) -> tuple[str | None, str]:
    """``sql`` (Spark's) in ``target``, or None and why not."""
    try:
        return transpile(sql, SOURCE, target), ""
    except InvalidInputError as e:
        return None, str(e)


def _dialect(r: dict[str, Any]) -> str:
    d = r.get("dialect")
    return d.lower() if r.get("type") == "sql" and isinstance(d, str) else ""


def version_with_derived(version: dict[str, Any]) -> dict[str, Any]:
    """The version with the dialects it lacks derived from its Spark SQL (as
    it is served: its catalog names already the loading catalog's)."""
    reps = version.get("representations")
    if not isinstance(reps, list):
        return version
    have = {_dialect(r) for r in reps if isinstance(r, dict)}
    spark = next((r for r in reps if isinstance(r, dict) and _dialect(r) == SOURCE
                  and isinstance(r.get("sql"), str)), None)
    missing = [t for t in TARGETS if t not in have]
    if spark is None or not missing:
        return version
    added, failed = [], []
    for target in missing:
        sql, why = derived_sql(spark["sql"], target)
        if sql is None:
            failed.append(f"{target}: {why}")
        else:
            added.append({"type": "sql", "sql": sql, "dialect": target})
    summary = dict(version.get("summary") or {})
    if added:
        summary[DERIVED] = (f"{', '.join(a['dialect'] for a in added)} derived from "
                            f"{SOURCE} by sqlglot {SQLGLOT} (served, not stored)")
    if failed:
        summary[UNDERIVED] = "; ".join(failed)
    return {**version, "representations": [*reps, *added], "summary": summary}


def metadata_with_derived(metadata: dict[str, Any]) -> dict[str, Any]:
    """View metadata with each version's missing dialects derived; when the
    current version carries one, ``replace.drop-dialect.allowed=true`` so
    that a client replacing it with its own dialect alone is not refused for
    dropping what was never stored."""
    versions = [version_with_derived(v) if isinstance(v, dict) else v
                for v in metadata.get("versions", [])]
    out = {**metadata, "versions": versions}
    current = next((v for v in versions if isinstance(v, dict)
                    and v.get("version-id") == metadata.get("current-version-id")), None)
    if current is not None and DERIVED in (current.get("summary") or {}):
        out["properties"] = {**(metadata.get("properties") or {}), DROP_DIALECT_ALLOWED: "true"}
    return out


def as_written(version: ViewVersion) -> ViewVersion:
    """An incoming version without what the server derived and served (see
    the module's docstring), nor the server's record of an engine's catalog
    name (``ENGINE_CATALOG``: only the server stamps it, from the name the
    engine gave in config, never from a client's summary); the version
    itself when it carries no marker."""
    summary = dict(version.summary or {})
    marker = summary.pop(DERIVED, None)
    summary.pop(UNDERIVED, None)
    summary.pop(ENGINE_CATALOG, None)
    if marker is None and summary == (version.summary or {}):
        return version
    marked = marker.split(" derived from ")[0].split(", ") if marker else []
    sqls = sql_representations(version)
    spark = next((r for r in sqls if r.dialect.lower() == SOURCE), None)
    reps = list(version.representations)
    for target in marked:
        derived = derived_sql(spark.sql, target)[0] if spark is not None else None
        at = next((i for i, r in enumerate(reps)
                   if isinstance(inner := getattr(r, "root", r), SQLViewRepresentation)
                   and inner.dialect.lower() == target and inner.sql == derived), None)
        if at is not None:
            del reps[at]
    return version.model_copy(update={"representations": reps, "summary": summary})
