"""Where the catalog keeps things (the database and the warehouse) and the
limits of what it reads; from options, then SAPWOOD_* variables, then the
embedded default under the data directory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from catalog.limits import DEFAULT_MAX_METADATA_BYTES, DEFAULT_READ_TIMEOUT_S


def data_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """Where the embedded defaults live: ``--data-dir``, else
    SAPWOOD_DATA_DIR, else ~/.sapwood."""
    return Path(given or os.environ.get("SAPWOOD_DATA_DIR") or Path.home() / ".sapwood")


def database_url(database: str | None = None,
                 data: str | os.PathLike[str] | None = None) -> str:
    """``--database``, else SAPWOOD_DATABASE_URL, else the SQLite file in the
    data directory (nothing created)."""
    from store.db import default_database_url

    return database or os.environ.get("SAPWOOD_DATABASE_URL") or default_database_url(
        data_dir(data))


@dataclass(frozen=True, slots=True)
class CatalogSettings:
    database_url: str
    # Base URI of new tables' and views' locations (fsspec: a local path,
    # file://, memory://, s3:// ...).
    warehouse: str
    # Whether a client may place an object outside the warehouse.
    allow_external_locations: bool = False
    # Larger metadata files are not read (register, loads).
    max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES
    # How long a read from remote storage may take.
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S

    @staticmethod
    def resolve(database: str | None = None, warehouse: str | None = None,
                allow_external_locations: bool | None = None, *,
                data: str | os.PathLike[str] | None = None,
                create: bool = True) -> CatalogSettings:
        """Options, then SAPWOOD_* variables, then the embedded default: a SQLite
        file and a warehouse folder under the data directory (``data``, else
        SAPWOOD_DATA_DIR, else ~/.sapwood; created here only with ``create``:
        a verb that uses a catalog creates nothing). Limits come from
        SAPWOOD_* variables only."""
        base = data_dir(data)
        url = database_url(database, base)
        if create and not (database or os.environ.get("SAPWOOD_DATABASE_URL")):
            base.mkdir(parents=True, exist_ok=True)
        wh = warehouse or os.environ.get("SAPWOOD_WAREHOUSE")
        if not wh:
            folder = base / "warehouse"
            if create:
                folder.mkdir(parents=True, exist_ok=True)
            wh = folder.resolve().as_uri()
        if allow_external_locations is None:
            allow_external_locations = os.environ.get(
                "SAPWOOD_ALLOW_EXTERNAL_LOCATIONS", "") in ("1", "true", "yes")
        return CatalogSettings(
            url, normalize_location(wh), allow_external_locations,
            max_metadata_bytes=int(positive("SAPWOOD_MAX_METADATA_BYTES",
                                            DEFAULT_MAX_METADATA_BYTES)),
            read_timeout_s=positive("SAPWOOD_METADATA_READ_TIMEOUT_S", DEFAULT_READ_TIMEOUT_S))


def positive(variable: str, default: float) -> float:
    """A positive number from the environment; a bad one stops the process at
    start rather than leaving a limit silently off."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise SystemExit(f"{variable}={text!r}: expected a number") from None
    if not value > 0:
        raise SystemExit(f"{variable}={text!r}: expected a positive number")
    return value


def normalize_location(uri: str) -> str:
    """A location without its trailing slash; a bare local path becomes file://."""
    uri = uri.rstrip("/")
    if "://" not in uri:
        uri = Path(uri).resolve().as_uri()
    return uri
