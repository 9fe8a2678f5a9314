"""What the server needs besides the catalog's own settings: the request
body limit and the host names it answers to."""

from __future__ import annotations

import os
from dataclasses import dataclass

from api.limits import DEFAULT_MAX_BODY_BYTES
from catalog.limits import DEFAULT_MAX_METADATA_BYTES, DEFAULT_READ_TIMEOUT_S
from catalog.settings import CatalogSettings, positive

# Names a loopback server is reached by (IPv6 with and without brackets).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")
# The in-process caches' budget (SAPWOOD_CACHE_BYTES), and the store's share.
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
CACHE_SHARE_STORE = 0.6
# The spec's example and PyIceberg's and Iceberg's default token lifetime.
DEFAULT_IDEMPOTENCY_LIFETIME_S = 1800


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str
    warehouse: str
    allow_external_locations: bool = False
    # Larger request bodies are answered 413 (api.limits).
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S
    # Host names the server answers to (api.hosts); "*" for any.
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    # How long an Idempotency-Key and its answer are kept (api.idempotency);
    # /v1/config says it as idempotency-key-lifetime.
    idempotency_lifetime_s: int = DEFAULT_IDEMPOTENCY_LIFETIME_S
    # What the in-process caches may hold together, in bytes (estimated):
    # the store's objects and the parsed metadata files (CACHE_SHARE_STORE
    # of it to the store). /metrics shows what they hold.
    cache_bytes: int = DEFAULT_CACHE_BYTES

    @property
    def store_cache_bytes(self) -> int:
        return int(self.cache_bytes * CACHE_SHARE_STORE)

    @property
    def files_cache_bytes(self) -> int:
        return self.cache_bytes - self.store_cache_bytes

    @property
    def catalog(self) -> CatalogSettings:
        return CatalogSettings(self.database_url, self.warehouse,
                               self.allow_external_locations, self.max_metadata_bytes,
                               self.read_timeout_s)

    @staticmethod
    def resolve(database: str | None = None, warehouse: str | None = None,
                allow_external_locations: bool | None = None) -> Settings:
        """The catalog's settings (catalog.settings), then the server's own
        from SAPWOOD_* variables."""
        c = CatalogSettings.resolve(database, warehouse, allow_external_locations)
        return Settings(c.database_url, c.warehouse, c.allow_external_locations,
                        max_body_bytes=int(positive("SAPWOOD_MAX_BODY_BYTES",
                                                    DEFAULT_MAX_BODY_BYTES)),
                        max_metadata_bytes=c.max_metadata_bytes,
                        read_timeout_s=c.read_timeout_s, allowed_hosts=allowed_hosts(),
                        idempotency_lifetime_s=int(positive(
                            "SAPWOOD_IDEMPOTENCY_LIFETIME_S", DEFAULT_IDEMPOTENCY_LIFETIME_S)),
                        cache_bytes=int(positive("SAPWOOD_CACHE_BYTES", DEFAULT_CACHE_BYTES)))


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
