"""Iceberg metadata files: where they go, writing them once, reading them cached.

Metadata files are immutable (a new name per change, never overwritten), so a
parsed file can be cached by its location for as long as the process lives.
"""

from __future__ import annotations

import errno
import re
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import fsspec
from pydantic import ValidationError
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import AddSnapshotUpdate, TableUpdate
from pyiceberg.view.metadata import ViewMetadata

from catalog.iceberg_v3.metadata import dump as dump_table
from catalog.iceberg_v3.metadata import parse as parse_table
from catalog.limits import (
    DEFAULT_MAX_METADATA_BYTES,
    DEFAULT_READ_TIMEOUT_S,
    TABLE_FORMATS,
    unsupported_format,
)
from catalog.metadata import exclusive, local_files
from catalog.metadata.engine_gc import served
from catalog.metadata.locations import METADATA_PATH, Locations
from catalog.metadata.reading import MetadataReader, decoded, not_found
from catalog.metadata.snapshot_files import SnapshotFiles
from catalog.metadata.still_there import still_there
from catalog.settings import CatalogSettings
from core.commits import Put
from core.content import IcebergView, MaterializedView
from core.errors import SapwoodError, bad_request, describe_validation
from core.lru import LRU
from core.mv.metadata import MaterializedViewMetadata, view_part

__all__ = ["Locations", "MetadataFiles", "next_metadata_location", "open_files"]

M = TypeVar("M")
# A commit's metadata file is written while the files its new snapshots name
# are read and checked (MetadataFiles.write_checked): both wait on storage,
# not on each other. Apart from the readers' pool, so a write never queues
# behind reads that count their time against a timeout.
_WRITES = ThreadPoolExecutor(max_workers=8, thread_name_prefix="sapwood-write")
_NUMBERED = re.compile(r"(?:^|/)(\d+)-[^/]*\.metadata\.json$")
_HADOOP = re.compile(r"(?:^|/)v(\d+)\.metadata\.json$")


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


def _invalid(kind: str, location: str, e: Exception) -> SapwoodError:
    """A file that is not valid metadata: what is wrong and where, never the
    file's contents (pydantic's own message quotes the input)."""
    if isinstance(e, ValidationError):
        what = describe_validation(e.errors(include_input=False))
        what = what.removeprefix("Invalid request: ")
    elif isinstance(e, UnicodeDecodeError):
        what = "not UTF-8 JSON text"
    else:
        what = type(e).__name__
    return bad_request(f"Invalid {kind} metadata in {location}: {what[:500]}")


# How a byte budget is shared among the parsed-file caches.
BUDGET_SHARES = {"tables": 0.45, "views": 0.20, "mvs": 0.15, "encoded": 0.20}
# Parsed metadata holds several times its JSON text in Python objects.
_PARSED_PER_BYTE = 6


class MetadataFiles:
    def __init__(self, reader: MetadataReader | None = None, cache_size: int = 2_000,
                 max_bytes: int | None = None) -> None:
        """``max_bytes``: what the parsed files may hold together (estimated
        from their size; see BUDGET_SHARES), besides ``cache_size`` each."""
        # Without a reader (tools, tests): anything under the root of the
        # local file system, with the default limits.
        self.reader = reader or MetadataReader(Locations("file:///", False),
                                               DEFAULT_MAX_METADATA_BYTES,
                                               DEFAULT_READ_TIMEOUT_S)

        def share(name: str) -> int | None:
            return int(max_bytes * BUDGET_SHARES[name]) if max_bytes is not None else None

        self.tables: LRU[str, tuple[TableMetadata, bytes]] = LRU(
            cache_size, share("tables"), lambda hit: 500 + _PARSED_PER_BYTE * len(hit[1]))
        self.views: LRU[str, tuple[ViewMetadata, bytes]] = LRU(
            cache_size, share("views"), lambda hit: 500 + _PARSED_PER_BYTE * len(hit[1]))
        self.mvs: LRU[str, MaterializedViewMetadata] = LRU(
            cache_size, share("mvs"), _mv_size)
        # Encoded forms derived from one file (a materialized view's storage
        # or view half, a table's snapshots=refs answer), by a key naming
        # the form and the file.
        self.encoded: LRU[str, bytes] = LRU(cache_size, share("encoded"),
                                            lambda data: 100 + len(data))
        self.snapshot_files = SnapshotFiles(self.reader, cache_size)

    def caches(self) -> dict[str, LRU[str, Any]]:
        """The caches by name (for /metrics)."""
        return {"tables": self.tables, "views": self.views, "mvs": self.mvs,
                "encoded": self.encoded}

    # -- reading ----------------------------------------------------------------
    def table(self, location: str) -> tuple[TableMetadata, bytes]:
        hit = self.tables.get(location)
        if hit is not None and not still_there(location):
            self.tables.pop(location)  # gone since it was read: answered as missing
            raise not_found(location)
        if hit is None:
            raw = decoded(location, self.reader.read(location), self.reader.max_bytes)
            try:
                meta = parse_table(raw)
            except SapwoodError as e:  # what this catalog cannot hold (a v3 variant)
                raise bad_request(f"Cannot use table metadata in {location}: {e.message}") from None
            except IcebergValidationError as e:  # PyIceberg's wrapper of pydantic's error
                raise _invalid("table", location, e.args[0] if e.args else e) from None
            except (ValueError, TypeError) as e:  # PyIceberg's readers raise both
                raise _invalid("table", location, e) from None
            if meta.format_version not in TABLE_FORMATS:
                raise bad_request(f"Cannot use table metadata in {location}: "
                                  + unsupported_format(meta.format_version))
            # As served, once per file: a file without gc.enabled=false (an
            # older catalog's, a registered one) is answered with it, and the
            # next file written from it keeps it.
            meta = served(meta)
            hit = (meta, dump_table(meta, raw))
            self.tables.put(location, hit)
        return hit

    def view(self, location: str) -> tuple[ViewMetadata, bytes]:
        def parse(raw: bytes) -> tuple[ViewMetadata, bytes]:
            meta = ViewMetadata.model_validate_json(raw)
            return meta, meta.model_dump_json().encode()

        return self._parsed(self.views, location, "view", parse)

    def mv(self, location: str) -> MaterializedViewMetadata:
        return self._parsed(self.mvs, location, "materialized view",
                            MaterializedViewMetadata.model_validate_json)

    def _parsed(self, cache: LRU[str, M], location: str, kind: str,
                parse: Callable[[bytes], M]) -> M:
        """A metadata file read once and parsed once (it never changes)."""
        hit = cache.get(location)
        if hit is not None and not still_there(location):
            cache.pop(location)
            raise not_found(location)
        if hit is None:
            raw = decoded(location, self.reader.read(location), self.reader.max_bytes)
            try:
                hit = parse(raw)
            except ValueError as e:
                raise _invalid(kind, location, e) from None
            cache.put(location, hit)
        return hit

    def view_of(self, c: IcebergView | MaterializedView) -> ViewMetadata:
        """A view's metadata, or a materialized view's view half."""
        if isinstance(c, MaterializedView):
            return view_part(self.mv(c.metadata_location))
        return self.view(c.metadata_location)[0]

    def require(self, location: str, what: str) -> None:
        """400 unless a file is at ``location``: a commit that names a file
        garbage collection removed (or that was never written) is refused,
        never landed pointing at nothing."""
        if not self.reader.exists(location):
            raise bad_request(f"Cannot commit: {what} {location} does not exist (not written, "
                              "or removed by garbage collection after the writer took longer "
                              "than gc's write window; write it again)")

    def require_put(self, op: Put) -> None:
        """A versioning-API put of a table or view at a new metadata file
        inside the warehouse needs that file to be there (outside it, the
        location is stored as the client's business and never opened, so
        the answer cannot tell whether something is there)."""
        loc = getattr(op.content, "metadata_location", None)
        if not loc or loc == getattr(op.expected, "metadata_location", None):
            return
        try:
            self.reader.locations.where(loc)
        except SapwoodError:
            return
        self.require(loc, f"the metadata file of {op.key}")

    def require_snapshots(self, table: str, updates: Sequence[TableUpdate],
                          base: TableMetadata | None, after: TableMetadata) -> None:
        """Every snapshot a commit adds must name a manifest list that is
        there, is one, and lies in the table's folders, and whose new
        manifests are manifests (catalog.metadata.snapshot_files): a client writes
        them before committing, a file gc removed meanwhile refuses the
        commit, and a file that is not what the commit says is refused
        before readers, gc or fsck meet it. ``after``: the table's metadata
        with ``updates`` applied."""
        self.snapshot_files.added("Cannot commit", table, updates, base, after)

    def require_registered(self, table: str, meta: TableMetadata) -> None:
        """The same for every snapshot of a table metadata file being registered."""
        self.snapshot_files.brought(f"Cannot register table {table}", table, meta)

    # -- writing ----------------------------------------------------------------
    def write_mv(self, meta: MaterializedViewMetadata, location: str) -> None:
        self._write(location, meta.to_json())
        self.mvs.put(location, meta)

    def write_table(self, meta: TableMetadata, location: str,
                    carried: bytes | None = None) -> bytes:
        """``carried``: the metadata ``meta`` was made from (format v3 keeps
        the fields PyIceberg does not model from it: catalog.iceberg_v3)."""
        data = dump_table(meta, carried)
        self._write(location, data)
        self.tables.put(location, (meta, data))
        return data

    def write_checked(self, table: str, updates: Sequence[TableUpdate],
                      base: TableMetadata | None, new: TableMetadata, location: str,
                      carried: bytes | None = None) -> bytes:
        """``require_snapshots`` and ``write_table`` together: with snapshots
        to check, the file is written beside the check (on S3 the PUT and
        the reads of the manifest list and manifests overlap, a round trip
        less per append); a refused check removes the file it wrote, as
        for any commit that does not land, and a write that failed (the
        name taken) removes nothing."""
        if not any(isinstance(u, AddSnapshotUpdate) for u in updates):
            return self.write_table(new, location, carried)
        written = _WRITES.submit(self.write_table, new, location, carried)
        try:
            self.require_snapshots(table, updates, base, new)
        except BaseException:
            if written.exception() is None:
                self.discard(location)
            raise
        return written.result()

    def write_view(self, meta: ViewMetadata, location: str) -> bytes:
        data = meta.model_dump_json().encode()
        self._write(location, data)
        self.views.put(location, (meta, data))
        return data

    def _write(self, location: str, data: bytes) -> None:
        locations = self.reader.locations
        # Judged again at the write (real path included), then written in a
        # file warehouse without following links: a link swapped in since
        # the location was checked cannot take the file out.
        parts = locations.confined(locations.where(location))
        try:
            if parts is not None and local_files.SUPPORTED:
                local_files.write_new(locations.real_root(), parts, data, location)
                return
            fs, path = fsspec.core.url_to_fs(location)
            try:
                exclusive.create(fs, path, data, location)
            except FileNotFoundError:
                # A folder (or the bucket) is missing: made, then created.
                # Never asked first, so the usual write is one request.
                fs.makedirs(fs._parent(path), exist_ok=True)
                exclusive.create(fs, path, data, location)
        except OSError as e:
            # Names the client chose (a location, write.metadata.path) can make
            # a path the file system refuses; the disk failing stays a 5xx.
            if e.errno in (errno.ENAMETOOLONG, errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
                raise bad_request(f"Cannot write metadata file {location}: "
                                  f"{e.strerror}") from None
            raise

    def discard(self, location: str) -> None:
        """Best effort: remove a file whose commit did not land."""
        for cache in (self.tables, self.views, self.mvs, self.encoded):
            cache.pop(location)
        try:
            fs, path = fsspec.core.url_to_fs(location)
            fs.rm(path)
        except (OSError, ValueError):
            pass


def open_files(settings: CatalogSettings, max_bytes: int | None = None) -> MetadataFiles:
    """The metadata files of a catalog with these settings (the server, and
    the command line's gc and fsck); ``max_bytes`` bounds their caches."""
    locations = Locations(settings.warehouse, settings.allow_external_locations)
    return MetadataFiles(MetadataReader(locations, settings.max_metadata_bytes,
                                        settings.read_timeout_s), max_bytes=max_bytes)


def _mv_size(mv: MaterializedViewMetadata) -> int:
    return 2_000 + 3_000 * (len(mv.snapshots) + len(mv.refreshes) + len(mv.versions))
