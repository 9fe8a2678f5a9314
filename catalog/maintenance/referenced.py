"""The files a table or view version references, read with PyIceberg:
its metadata file, and for a table (or a materialized view's storage)
every statistics file, every snapshot's manifest list, every manifest and
every data and delete file they list — format v3's deletion vectors (Puffin
files) among them. Garbage collection keeps them; fsck checks they exist.
A file that is there but cannot be read is reported as damaged, and the
walk goes on with the rest (gc then keeps every file in that table's
folders; fsck reports it)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import fsspec
from pyiceberg.io import FileIO
from pyiceberg.manifest import (
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    read_manifest_list,
)

from catalog.claims import places
from catalog.fileio import ReaderIO
from catalog.files import MetadataFiles
from catalog.snapshot_files import diagnose
from core.content import Content, IcebergTable, MaterializedView
from core.errors import FileNotFoundInWarehouseError, SapwoodError


@dataclass
class Need:
    """A version that references a file."""

    content_id: str
    metadata_location: str
    snapshot_id: int | None = None


@dataclass
class Damaged:
    """A file a version references that is there but cannot be read as what
    it should be (or could not be read at all: a timeout, over the size
    limit): what it names stays unknown. ``places``: the table's location
    and write paths, when its metadata file could be read."""

    path: str
    kind: str  # metadata, manifest-list, manifest
    problem: str  # what is wrong, never what the file holds
    needs: list[Need] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        ids = sorted({n.content_id for n in self.needs})
        where = (f"on {', '.join(self.refs)}" if self.refs
                 else "in no reference's history now (a reflog entry within the grace)")
        return (f"damaged {self.kind} file {self.path} ({self.problem}): needed by "
                f"{', '.join(self.keys) or 'content ' + ', '.join(ids)} {where}")


def references(files: MetadataFiles, contents: Iterable[Content],
               damaged: list[Damaged] | None = None,
               ) -> Iterator[tuple[str, str, Need, str | None]]:
    """(kind, normalised path, the version needing it, the manifest listing
    it) for every file the versions reference. Each manifest list is read
    once (every version of a table lists the snapshots before it: reading
    them again would be quadratic in the table's history), each manifest's
    entries once, for the first snapshot that lists it.

    Files are read through the catalog's reader (catalog.fileio.ReaderIO:
    inside the warehouse, regular files, the size limit, the timeout). A
    file that is not there is skipped (fsck reports it missing); one that is
    there but cannot be read as what it should be is appended to
    ``damaged`` and skipped, so one table's damage never stops the rest. A
    metadata location outside the warehouse (put as raw content through the
    versioning API) is not opened."""
    io = ReaderIO(files.reader)
    read_lists: set[str] = set()
    read_manifests: set[str] = set()
    hurt = _Damage(files, damaged)
    for c in contents:
        loc = getattr(c, "metadata_location", None)
        if not loc or c.id is None:
            continue
        yield "metadata", norm(loc), Need(c.id, loc), None
        if not isinstance(c, IcebergTable | MaterializedView):
            continue
        try:
            files.reader.locations.where(loc)
        except SapwoodError:
            continue  # not the catalog's to open
        try:
            doc = storage_fields(files.reader.read(loc))
            found = places(doc.get("location"), doc.get("properties") or {})
            snapshots = list(doc.get("snapshots", []))
            stats = [str(s["statistics-path"]) for s in
                     [*doc.get("statistics", []), *doc.get("partition-statistics", [])]]
        except FileNotFoundInWarehouseError:
            continue  # reported as a missing metadata file
        except Exception as e:  # a hostile file, parsed: any failure is its own
            hurt.add(loc, "metadata", e, Need(c.id, loc), [])
            continue
        for path in stats:
            yield "statistics", norm(path), Need(c.id, loc), None
        for snap in snapshots:
            if not isinstance(snap, dict):
                continue
            need = Need(c.id, loc, snap.get("snapshot-id"))
            mlist = snap.get("manifest-list")
            if not mlist:  # format v1 may list manifests in the snapshot itself
                paths = [p for p in snap.get("manifests") or [] if p not in read_lists]
                read_lists.update(paths)
                yield from _manifests(io, [(p, None) for p in paths], need, read_manifests,
                                      hurt, found)
                continue
            if mlist in read_lists:
                continue
            read_lists.add(mlist)
            yield "manifest-list", norm(mlist), need, None
            try:
                listed: list[tuple[str, ManifestFile | None]] = [
                    (m.manifest_path, m) for m in read_manifest_list(io.new_input(mlist))]
            except FileNotFoundError:
                continue
            except Exception as e:  # a hostile file, parsed: any failure is its own
                hurt.add(mlist, "manifest-list", e, need, found)
                continue
            yield from _manifests(io, listed, need, read_manifests, hurt, found)


# The records each kind of Avro file holds (catalog.snapshot_files).
_RECORDS = {"manifest-list": "manifest_file", "manifest": "manifest_entry"}


class _Damage:
    """Collects what could not be read, one entry per file."""

    def __init__(self, files: MetadataFiles, out: list[Damaged] | None) -> None:
        self.files = files
        self.out = out
        self.by_path: dict[str, Damaged] = {}

    def add(self, path: str, kind: str, e: Exception, need: Need, found: list[str]) -> None:
        if self.out is None:
            return
        key = norm(path)
        d = self.by_path.get(key)
        if d is None:
            d = self.by_path[key] = Damaged(key, kind, self._problem(path, kind, e),
                                            places=found)
            self.out.append(d)
        if len(d.needs) < 200:
            d.needs.append(need)

    def _problem(self, path: str, kind: str, e: Exception) -> str:
        """What is wrong with a file, without quoting it: the catalog's own
        messages say it that way, and an Avro file's header says what it
        holds; a parser's message may quote the bytes."""
        if isinstance(e, SapwoodError):
            return e.message
        if kind in _RECORDS:
            said = diagnose(self.files.reader, path, _RECORDS[kind])
            if said is not None:
                return f"not a {kind.replace('-', ' ')}: {said}"
            return f"not a {kind.replace('-', ' ')}: its entries do not decode " \
                f"({type(e).__name__})"
        if isinstance(e, UnicodeDecodeError):
            return "not UTF-8 JSON text"
        if isinstance(e, ValueError):
            return "not table metadata JSON"
        return f"cannot be read ({type(e).__name__})"


def _manifests(io: FileIO, listed: list[tuple[str, ManifestFile | None]], need: Need,
               read: set[str], hurt: _Damage, found: list[str],
               ) -> Iterator[tuple[str, str, Need, str | None]]:
    """Each manifest, and (the first time it is met) every file it lists."""
    for path, m in listed:
        yield "manifest", norm(path), need, None
        if path in read:
            continue
        read.add(path)
        try:
            entries = (m.fetch_manifest_entry(io, discard_deleted=False) if m is not None
                       else read_manifest_entries(io, path))
            files = [(e.status, _kind(e), norm(e.data_file.file_path)) for e in entries]
        except FileNotFoundError:
            continue
        except Exception as e:  # a hostile file, parsed: any failure is its own
            hurt.add(path, "manifest", e, need, found)
            continue
        for status, kind, file in files:
            if status == ManifestEntryStatus.DELETED:
                # A tombstone: the snapshot removed the file; only snapshots
                # before it need it, and they list it themselves (as Iceberg's
                # own expiry reads it).
                continue
            yield kind, file, need, path


def _kind(e: ManifestEntry) -> str:
    """data, delete, or deletion-vector: format v3's position deletes are
    deletion vectors in Puffin files, one file holding the vectors of many
    data files (each listed, the same path)."""
    if e.data_file.content == DataFileContent.DATA:
        return "data"
    return "deletion-vector" if e.data_file.file_format == FileFormat.PUFFIN else "delete"


def read_manifest_entries(io: FileIO, path: str) -> list[ManifestEntry]:
    """The entries of a manifest known by its path only (format v1 inline)."""
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.manifest import (
        DEFAULT_READ_VERSION,
        MANIFEST_ENTRY_SCHEMAS,
        DataFile,
        DataFileContent,
        FileFormat,
        ManifestEntryStatus,
    )

    # As ManifestFile.fetch_manifest_entry reads one (without a manifest
    # list there is no ManifestFile to inherit sequence numbers from: only
    # paths are wanted here).
    with AvroFile[ManifestEntry](
            io.new_input(path), MANIFEST_ENTRY_SCHEMAS[DEFAULT_READ_VERSION],
            read_types={-1: ManifestEntry, 2: DataFile},
            read_enums={0: ManifestEntryStatus, 101: FileFormat,
                        134: DataFileContent}) as reader:
        return list(reader)


def storage_fields(raw: bytes) -> dict[str, Any]:
    """The fields of a table's (or a materialized view's) metadata that name
    files: read from the JSON as it is, without building PyIceberg's model
    (a table's every version lists all its snapshots so far: parsing each
    whole made gc quadratic in the history)."""
    doc = json.loads(raw)
    if not isinstance(doc, dict):
        raise ValueError("metadata is not a JSON object")
    return doc


def norm(location: str) -> str:
    """The path part of a location, as fsspec lists it."""
    return str(fsspec.core.url_to_fs(location)[1]).rstrip("/")
