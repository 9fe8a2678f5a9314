"""Iceberg metadata files: where they go, writing them once, reading them cached.

Metadata files are immutable (a new name per change, never overwritten), so a
parsed file can be cached by its location for as long as the process lives.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from pathlib import Path
from typing import Generic, TypeVar

import fsspec
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil
from pyiceberg.view.metadata import ViewMetadata

from api.errors import IcebergError, bad_request

M = TypeVar("M")
METADATA_PATH = "write.metadata.path"
_NUMBERED = re.compile(r"(?:^|/)(\d+)-[^/]*\.metadata\.json$")
_HADOOP = re.compile(r"(?:^|/)v(\d+)\.metadata\.json$")


def load_result(location: str | None, metadata: bytes) -> bytes:
    """A LoadTableResult / LoadViewResult, around metadata already encoded."""
    loc = json.dumps(location).encode()
    return b'{"metadata-location":' + loc + b',"metadata":' + metadata + b',"config":{}}'


def normalize(location: str) -> str:
    """One spelling per local location (``/x``, ``file:/x`` and ``file:///x``)."""
    location = location.rstrip("/")
    if "://" not in location:
        if location.startswith("file:"):
            location = location[len("file:"):]
        return Path(location).as_uri() if location.startswith("/") else location
    return location


class Locations:
    def __init__(self, warehouse: str, allow_external: bool) -> None:
        self.warehouse = normalize(warehouse)
        self.allow_external = allow_external

    def default(self, namespace: tuple[str, ...], name: str) -> str:
        # A suffix per object: the same name on two branches, or dropped and
        # created again, never shares a folder.
        return "/".join([self.warehouse, *namespace, f"{name}_{uuid.uuid4().hex}"])

    def check(self, location: str) -> str:
        loc = normalize(location)
        if not loc:
            raise bad_request("Invalid location: empty")
        if not self.allow_external and loc != self.warehouse and \
                not loc.startswith(self.warehouse + "/"):
            raise bad_request(
                f"Location {location} is outside the warehouse {self.warehouse}; this server "
                "does not allow external locations (SAPWOOD_ALLOW_EXTERNAL_LOCATIONS)")
        return loc


def next_metadata_location(location: str, properties: dict[str, str],
                           previous: str | None) -> str:
    folder = properties.get(METADATA_PATH) or f"{location.rstrip('/')}/metadata"
    return f"{folder.rstrip('/')}/{version_of(previous) + 1:05d}-{uuid.uuid4()}.metadata.json"


def version_of(location: str | None) -> int:
    """The number a metadata file name carries; -1 before the first file."""
    if location is None:
        return -1
    m = _NUMBERED.search(location) or _HADOOP.search(location)
    return int(m.group(1)) if m else 0


class BoundedCache(Generic[M]):
    """A dict that forgets its oldest entry when full; for values keyed by an
    immutable file's location, so nothing in it ever goes stale."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: dict[str, M] = {}
        self.lock = threading.Lock()

    def get(self, key: str) -> M | None:
        return self.items.get(key)

    def put(self, key: str, value: M) -> None:
        with self.lock:
            if len(self.items) >= self.size:
                self.items.pop(next(iter(self.items)), None)
            self.items[key] = value


class MetadataFiles:
    def __init__(self, cache_size: int = 2_000) -> None:
        self.tables: BoundedCache[tuple[TableMetadata, bytes]] = BoundedCache(cache_size)
        self.views: BoundedCache[tuple[ViewMetadata, bytes]] = BoundedCache(cache_size)
        # Whole load responses by metadata location (the common read).
        self.bodies: BoundedCache[bytes] = BoundedCache(cache_size)

    # -- reading ----------------------------------------------------------------
    def table(self, location: str) -> tuple[TableMetadata, bytes]:
        hit = self.tables.get(location)
        if hit is None:
            raw = self._read(location)
            try:
                meta = TableMetadataUtil.parse_raw(raw.decode())
            except ValueError as e:
                raise bad_request(f"Invalid table metadata in {location}: {e}") from None
            hit = (meta, meta.model_dump_json().encode())
            self.tables.put(location, hit)
        return hit

    def view(self, location: str) -> tuple[ViewMetadata, bytes]:
        hit = self.views.get(location)
        if hit is None:
            raw = self._read(location)
            try:
                meta = ViewMetadata.model_validate_json(raw)
            except ValueError as e:
                raise bad_request(f"Invalid view metadata in {location}: {e}") from None
            hit = (meta, meta.model_dump_json().encode())
            self.views.put(location, hit)
        return hit

    def _read(self, location: str) -> bytes:
        try:
            with fsspec.open(location, "rb") as f:
                return f.read()
        except FileNotFoundError:
            raise IcebergError(404, "NotFoundException",
                               f"Metadata file does not exist: {location}") from None
        except (OSError, ValueError) as e:
            raise bad_request(f"Cannot read metadata file {location}: {e}") from None

    # -- writing ----------------------------------------------------------------
    def write_table(self, meta: TableMetadata, location: str) -> bytes:
        data = meta.model_dump_json().encode()
        self._write(location, data)
        self.tables.put(location, (meta, data))
        return data

    def write_view(self, meta: ViewMetadata, location: str) -> bytes:
        data = meta.model_dump_json().encode()
        self._write(location, data)
        self.views.put(location, (meta, data))
        return data

    def _write(self, location: str, data: bytes) -> None:
        fs, path = fsspec.core.url_to_fs(location)
        fs.makedirs(fs._parent(path), exist_ok=True)
        if fs.exists(path):
            raise bad_request(f"Metadata file {location} exists already: files are never "
                              "overwritten")
        with fs.open(path, "wb") as f:
            f.write(data)

    def discard(self, location: str) -> None:
        """Best effort: remove a file whose commit did not land."""
        for cache in (self.tables, self.views, self.bodies):
            cache.items.pop(location, None)
        try:
            fs, path = fsspec.core.url_to_fs(location)
            fs.rm(path)
        except (OSError, ValueError):
            pass
