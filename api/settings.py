"""Where the server keeps things: the catalog database and the warehouse."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def data_dir() -> Path:
    return Path(os.environ.get("SAPWOOD_DATA_DIR") or Path.home() / ".sapwood")


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str
    # Base URI of new tables' and views' locations (fsspec: a local path,
    # file://, memory://, s3:// ...).
    warehouse: str
    # Whether a client may place an object outside the warehouse.
    allow_external_locations: bool = False

    @staticmethod
    def resolve(database: str | None = None, warehouse: str | None = None,
                allow_external_locations: bool | None = None) -> Settings:
        """Options, then SAPWOOD_* variables, then the embedded default: a SQLite
        file and a warehouse folder under the data directory (created here)."""
        from store.db import default_database_url

        base = data_dir()
        url = database or os.environ.get("SAPWOOD_DATABASE_URL")
        if not url:
            base.mkdir(parents=True, exist_ok=True)
            url = default_database_url(base)
        wh = warehouse or os.environ.get("SAPWOOD_WAREHOUSE")
        if not wh:
            folder = base / "warehouse"
            folder.mkdir(parents=True, exist_ok=True)
            wh = folder.resolve().as_uri()
        if allow_external_locations is None:
            allow_external_locations = os.environ.get(
                "SAPWOOD_ALLOW_EXTERNAL_LOCATIONS", "") in ("1", "true", "yes")
        return Settings(url, normalize_location(wh), allow_external_locations)


def normalize_location(uri: str) -> str:
    """A location without its trailing slash; a bare local path becomes file://."""
    uri = uri.rstrip("/")
    if "://" not in uri:
        uri = Path(uri).resolve().as_uri()
    return uri
