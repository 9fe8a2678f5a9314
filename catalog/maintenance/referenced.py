"""The files a table or view version references, read with PyIceberg:
its metadata file, and for a table (or a materialized view's storage)
every statistics file, every snapshot's manifest list, every manifest and
every data and delete file they list — format v3's deletion vectors (Puffin
files) among them. Garbage collection keeps them; fsck checks they exist.
A file that is there but cannot be read is reported as damaged, and the
walk goes on with the rest (gc then keeps every file in that table's
folders; fsck reports it). Signing (catalog.maintenance.liveness) reads
files with the same functions and keeps the same folders (kept_folders)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Set
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

from catalog.metadata.claims import places
from catalog.metadata.fileio import ReaderIO
from catalog.metadata.files import MetadataFiles
from catalog.metadata.snapshot_files import diagnose
from core.content import Content, IcebergTable, MaterializedView
from core.errors import FileNotFoundInWarehouseError, SapwoodError
from store.locations import ancestors


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

    Files are read through the catalog's reader (catalog.metadata.fileio.ReaderIO:
    inside the warehouse, regular files, the size limit, the timeout). A
    file that is not there is skipped (fsck reports it missing); one that is
    there but cannot be read as what it should be is appended to
    ``damaged`` and skipped, so one table's damage never stops the rest. A
    metadata location outside the warehouse (put as raw content through the
    versioning API) is not opened."""
    io = ReaderIO(files.reader)
    read_lists: set[str] = set()
    read_manifests: set[str] = set()
    hurt = _Damage(damaged)
    for c in contents:
        loc = getattr(c, "metadata_location", None)
        if not loc or c.id is None:
            continue
        yield "metadata", norm(loc), Need(c.id, loc), None
        if not isinstance(c, IcebergTable | MaterializedView):
            continue
        try:
            version = version_files(files, loc)
        except Unreadable as u:
            hurt.add(u, Need(c.id, loc), ())
            continue
        if version is None:
            continue  # not there (reported as a missing metadata file), or not the catalog's
        for path in version.statistics:
            yield "statistics", norm(path), Need(c.id, loc), None
        for snapshot_id, mlist, inline in version.snapshots:
            need = Need(c.id, loc, snapshot_id)
            if mlist is None:  # format v1 may list manifests in the snapshot itself
                paths = [p for p in inline if p not in read_lists]
                read_lists.update(paths)
                yield from _manifests(io, files, [(p, None) for p in paths], need,
                                      read_manifests, hurt, version.places)
                continue
            if mlist in read_lists:
                continue
            read_lists.add(mlist)
            yield "manifest-list", norm(mlist), need, None
            try:
                listed = manifest_list(io, files, mlist)
            except Unreadable as u:
                hurt.add(u, need, version.places)
                continue
            if listed is not None:
                yield from _manifests(io, files, listed, need, read_manifests, hurt,
                                      version.places)


# -- reading one file: what gc, fsck and signing (catalog.maintenance.liveness) share ------
class Unreadable(Exception):
    """A file a version references that is there but cannot be read as what
    it should be (or could not be read at all: a timeout, over the size
    limit): what it names is unknown. ``problem`` never quotes the file."""

    def __init__(self, path: str, kind: str, problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.kind = kind  # metadata, manifest-list, manifest
        self.problem = problem

    def damaged(self, need: Need, places: Iterable[str]) -> Damaged:
        return Damaged(norm(self.path), self.kind, self.problem, [need], list(places))


@dataclass(frozen=True, slots=True)
class VersionFiles:
    """What one table (or materialized view storage) metadata file names."""

    places: tuple[str, ...]  # the table's location and write.*.path places
    statistics: tuple[str, ...]
    # Each snapshot: its id, its manifest list, or (format v1) the manifests
    # it lists itself.
    snapshots: tuple[tuple[int | None, str | None, tuple[str, ...]], ...]


def version_files(files: MetadataFiles, loc: str) -> VersionFiles | None:
    """What the metadata file at ``loc`` names; None when it is not there or
    lies outside the warehouse (not the catalog's to open); Unreadable when
    it is there and cannot be read as table metadata."""
    try:
        files.reader.locations.where(loc)
    except SapwoodError:
        return None
    try:
        doc = storage_fields(files.reader.read(loc))
        found = places(doc.get("location"), doc.get("properties") or {})
        stats = tuple(str(s["statistics-path"]) for s in
                      [*doc.get("statistics", []), *doc.get("partition-statistics", [])])
        snaps = []
        for snap in doc.get("snapshots", []):
            if not isinstance(snap, dict):
                continue
            mlist = snap.get("manifest-list") or None
            inline = () if mlist else tuple(snap.get("manifests") or ())
            if not all(isinstance(p, str) for p in (*inline, *([mlist] if mlist else []))):
                raise ValueError("a snapshot names a file that is not a string")
            snaps.append((snap.get("snapshot-id"), mlist, inline))
    except FileNotFoundInWarehouseError:
        return None
    except Exception as e:  # a hostile file, parsed: any failure is its own
        raise Unreadable(loc, "metadata", problem(files, loc, "metadata", e)) from None
    return VersionFiles(tuple(found), stats, tuple(snaps))


def manifest_list(io: FileIO, files: MetadataFiles, mlist: str,
                  ) -> list[tuple[str, ManifestFile | None]] | None:
    """The manifests a manifest list names; None when it is not there."""
    try:
        return [(m.manifest_path, m) for m in read_manifest_list(io.new_input(mlist))]
    except FileNotFoundError:
        return None
    except Exception as e:  # a hostile file, parsed: any failure is its own
        raise Unreadable(mlist, "manifest-list",
                         problem(files, mlist, "manifest-list", e)) from None


def manifest_files(io: FileIO, files: MetadataFiles, path: str, m: ManifestFile | None,
                   ) -> list[tuple[ManifestEntryStatus, str, str]] | None:
    """(status, kind, normalised path) of each file a manifest lists
    (``m``: its entry in a manifest list; None: format v1's inline
    manifests, known by path only); None when it is not there."""
    try:
        entries = (m.fetch_manifest_entry(io, discard_deleted=False) if m is not None
                   else read_manifest_entries(io, path))
        return [(e.status, _kind(e), norm(e.data_file.file_path)) for e in entries]
    except FileNotFoundError:
        return None
    except Exception as e:  # a hostile file, parsed: any failure is its own
        raise Unreadable(path, "manifest", problem(files, path, "manifest", e)) from None


# The records each kind of Avro file holds (catalog.metadata.snapshot_files).
_RECORDS = {"manifest-list": "manifest_file", "manifest": "manifest_entry"}


def problem(files: MetadataFiles, path: str, kind: str, e: Exception) -> str:
    """What is wrong with a file, without quoting it: the catalog's own
    messages say it that way, and an Avro file's header says what it
    holds; a parser's message may quote the bytes."""
    if isinstance(e, SapwoodError):
        return e.message
    if kind in _RECORDS:
        said = diagnose(files.reader, path, _RECORDS[kind])
        if said is not None:
            return f"not a {kind.replace('-', ' ')}: {said}"
        return f"not a {kind.replace('-', ' ')}: its entries do not decode " \
            f"({type(e).__name__})"
    if isinstance(e, UnicodeDecodeError):
        return "not UTF-8 JSON text"
    if isinstance(e, ValueError):
        return "not table metadata JSON"
    return f"cannot be read ({type(e).__name__})"


# -- damage: which files are kept --------------------------------------------------------
def kept_folders(damaged: Iterable[Damaged], claimed: Mapping[str, set[str]]) -> set[str]:
    """A damaged table's files cannot be told apart — which of them its
    history needs is unknown — so every file in its folders is kept: by gc
    (catalog.maintenance.gc) and by signing, which deletes and writes
    nothing there (catalog.maintenance.liveness). The folders (normalised
    paths): each damaged table's places, read from its metadata, and those
    the location index holds for it (``claimed``: content id -> places);
    when neither knows them, the folder its metadata file is in (or, for
    ``<location>/metadata``, the one above)."""
    out: set[str] = set()
    for d in damaged:
        found = set(d.places)
        for n in d.needs:
            found |= claimed.get(n.content_id, set())
        if not found:
            for n in d.needs:
                folder = n.metadata_location.rsplit("/", 1)[0]
                found.add(folder.rsplit("/", 1)[0] if folder.endswith("/metadata") else folder)
        out |= {norm(p) for p in found}
    return out


def in_folders(path: str, folders: Set[str]) -> bool:
    """Whether ``path`` (normalised) lies in one of ``folders`` (kept_folders)."""
    return any(a in folders for a in ancestors(path.rstrip("/")))


class _Damage:
    """Collects what could not be read, one entry per file."""

    def __init__(self, out: list[Damaged] | None) -> None:
        self.out = out
        self.by_path: dict[str, Damaged] = {}

    def add(self, u: Unreadable, need: Need, found: Iterable[str]) -> None:
        if self.out is None:
            return
        d = self.by_path.get(norm(u.path))
        if d is None:
            d = self.by_path[norm(u.path)] = u.damaged(need, found)
            self.out.append(d)
        elif len(d.needs) < 200:
            d.needs.append(need)


def _manifests(io: FileIO, files: MetadataFiles, listed: list[tuple[str, ManifestFile | None]],
               need: Need, read: set[str], hurt: _Damage, found: Iterable[str],
               ) -> Iterator[tuple[str, str, Need, str | None]]:
    """Each manifest, and (the first time it is met) every file it lists."""
    for path, m in listed:
        yield "manifest", norm(path), need, None
        if path in read:
            continue
        read.add(path)
        try:
            listing = manifest_files(io, files, path, m)
        except Unreadable as u:
            hurt.add(u, need, found)
            continue
        for status, kind, file in listing or ():
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
