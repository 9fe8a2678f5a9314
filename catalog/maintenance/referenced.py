"""The files a table or view version references, read with PyIceberg:
its metadata file, and for a table (or a materialized view's storage)
every statistics file, every snapshot's manifest list, every manifest and
every data and delete file they list — format v3's deletion vectors (Puffin
files) among them. Garbage collection keeps them; fsck checks they exist."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
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

from catalog.fileio import file_io
from catalog.files import MetadataFiles
from core.content import Content, IcebergTable, MaterializedView
from core.errors import SapwoodError


@dataclass
class Need:
    """A version that references a file."""

    content_id: str
    metadata_location: str
    snapshot_id: int | None = None


def references(files: MetadataFiles, contents: Iterable[Content],
               ) -> Iterator[tuple[str, str, Need, str | None]]:
    """(kind, normalised path, the version needing it, the manifest listing
    it) for every file the versions reference. Each manifest list is read
    once (every version of a table lists the snapshots before it: reading
    them again would be quadratic in the table's history), each manifest's
    entries once, for the first snapshot that lists it."""
    read_lists: set[str] = set()
    read_manifests: set[str] = set()
    for c in contents:
        loc = getattr(c, "metadata_location", None)
        if not loc or c.id is None:
            continue
        yield "metadata", norm(loc), Need(c.id, loc), None
        if not isinstance(c, IcebergTable | MaterializedView):
            continue
        try:
            doc = storage_fields(files.reader.read(loc))
        except (SapwoodError, ValueError):
            continue  # reported as a missing (or unreadable) metadata file
        io = file_io(str(doc.get("location") or loc))
        for stat in [*doc.get("statistics", []), *doc.get("partition-statistics", [])]:
            yield "statistics", norm(stat["statistics-path"]), Need(c.id, loc), None
        for snap in doc.get("snapshots", []):
            need = Need(c.id, loc, snap.get("snapshot-id"))
            mlist = snap.get("manifest-list")
            if not mlist:  # format v1 may list manifests in the snapshot itself
                paths = [p for p in snap.get("manifests") or [] if p not in read_lists]
                read_lists.update(paths)
                yield from _manifests(io, [(p, None) for p in paths], need, read_manifests)
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
            yield from _manifests(io, listed, need, read_manifests)


def _manifests(io: FileIO, listed: list[tuple[str, ManifestFile | None]], need: Need,
               read: set[str]) -> Iterator[tuple[str, str, Need, str | None]]:
    """Each manifest, and (the first time it is met) every file it lists."""
    for path, m in listed:
        yield "manifest", norm(path), need, None
        if path in read:
            continue
        read.add(path)
        try:
            entries = (m.fetch_manifest_entry(io, discard_deleted=False) if m is not None
                       else read_manifest_entries(io, path))
        except FileNotFoundError:
            continue
        for e in entries:
            if e.status == ManifestEntryStatus.DELETED:
                # A tombstone: the snapshot removed the file; only snapshots
                # before it need it, and they list it themselves (as Iceberg's
                # own expiry reads it).
                continue
            yield _kind(e), norm(e.data_file.file_path), need, path


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
