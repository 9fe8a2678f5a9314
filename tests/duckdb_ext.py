"""DuckDB as a second engine, offline: where its extension wheels put the
extensions (REST_NOTES)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def duckdb_extensions() -> str:
    """The extension directory. The wheels unpack into the duckdb_ext package
    (a namespace package: found by its search path, wherever pip put it)."""
    spec = importlib.util.find_spec("duckdb_ext")
    assert spec is not None and spec.submodule_search_locations
    return str(next(Path(p) / "extensions" for p in spec.submodule_search_locations
                    if any((Path(p) / "extensions").rglob("iceberg.duckdb_extension"))))
