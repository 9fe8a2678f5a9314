"""Where the server keeps things: the catalog database and the warehouse."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from api.limits import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_METADATA_BYTES,
    DEFAULT_READ_TIMEOUT_S,
)

# Names a loopback server is reached by (IPv6 with and without brackets).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")


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
    # Larger request bodies are answered 413 (api.limits).
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # Larger metadata files are not read (register, loads).
    max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES
    # How long a read from remote storage may take.
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S
    # Host names the server answers to (api.hosts); "*" for any.
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS

    @staticmethod
    def resolve(database: str | None = None, warehouse: str | None = None,
                allow_external_locations: bool | None = None) -> Settings:
        """Options, then SAPWOOD_* variables, then the embedded default: a SQLite
        file and a warehouse folder under the data directory (created here).
        Limits and host names come from SAPWOOD_* variables only."""
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
        return Settings(url, normalize_location(wh), allow_external_locations,
                        max_body_bytes=int(_positive("SAPWOOD_MAX_BODY_BYTES",
                                                     DEFAULT_MAX_BODY_BYTES)),
                        max_metadata_bytes=int(_positive("SAPWOOD_MAX_METADATA_BYTES",
                                                         DEFAULT_MAX_METADATA_BYTES)),
                        read_timeout_s=_positive("SAPWOOD_METADATA_READ_TIMEOUT_S",
                                                 DEFAULT_READ_TIMEOUT_S),
                        allowed_hosts=allowed_hosts())


def allowed_hosts() -> tuple[str, ...]:
    """SAPWOOD_ALLOWED_HOSTS (comma-separated), else the loopback names plus the
    address ``sapwood serve`` binds (SAPWOOD_BIND_HOST) unless that is a
    wildcard: a server on 0.0.0.0 is reached by names it cannot guess."""
    listed = os.environ.get("SAPWOOD_ALLOWED_HOSTS")
    if listed is not None and listed.strip():
        return tuple(h.strip() for h in listed.split(",") if h.strip())
    bind = os.environ.get("SAPWOOD_BIND_HOST", "").strip()
    if bind and bind not in ("0.0.0.0", "::", "[::]") and bind not in LOOPBACK_HOSTS:
        return (*LOOPBACK_HOSTS, bind)
    return LOOPBACK_HOSTS


def _positive(variable: str, default: float) -> float:
    """A positive number from the environment; a bad one stops the server at
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
