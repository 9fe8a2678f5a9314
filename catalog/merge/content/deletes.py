"""Deletion vectors in a content merge of a format v3 table
(catalog.merge.content.tables): a side that deleted rows with deletion vectors, and
otherwise only added, still merges — unless the other side changed the same
data file.

A deletion vector (a Puffin blob, format/spec.md "Deletion Vectors") names
the one data file it deletes from (``referenced_data_file``), and a
snapshot holds at most one per data file. So the source's new vectors can
join the target's snapshot exactly when:

* they are deletion vectors (position or equality delete files apply to
  more than one data file, or by sequence number to the other side's new
  rows: refused, as before v3);
* the target added no vector for the same data file since the merge base
  (both sides deleted rows of one file: a conflict naming it);
* the source did not replace a vector the merge base had (Iceberg merges
  the old vector into the new one and removes it; the target still lists
  the old one: a conflict naming it).

A vector the source added and replaced since the base is simply not
there any more: only the source's live vectors count. The source's delete
manifests holding only its new vectors are reused as they are; others are
rewritten to hold just those."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from pyiceberg.io import FileIO
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Operation

from catalog.iceberg_v3 import manifests as v3


class DeletesNotMergeable(Exception):
    """Why the deletes cannot be combined (content.tables turns it
    into the conflict's reason)."""


@dataclass
class SourceDeletes:
    manifests: list[ManifestFile] = field(default_factory=list)
    vectors: int = 0
    rows: int = 0  # positions the vectors delete
    rewritten: int = 0

    def operation(self, adds_data: bool) -> Operation:
        """The combined snapshot's, as Iceberg names a row delta: deletes
        and data an overwrite, deletes alone a delete."""
        if not self.vectors:
            return Operation.APPEND
        return Operation.OVERWRITE if adds_data else Operation.DELETE


def referenced(f: DataFile) -> str | None:
    value = f[v3.FILE_FIRST_ROW_ID + 1] if len(f) > v3.FILE_FIRST_ROW_ID + 1 else None
    return str(value) if value is not None else None


def _is_vector(f: DataFile) -> bool:
    return (f.content == DataFileContent.POSITION_DELETES and f.file_format == FileFormat.PUFFIN
            and referenced(f) is not None)


def source_deletes(io: FileIO, base: TableMetadata, source: TableMetadata,
                   source_manifests: list[ManifestFile], target_manifests: list[ManifestFile],
                   target_ids: set[int], snap_id: int, folder: str,
                   write: bool) -> SourceDeletes:
    """The source's deletion vectors since the base, as delete manifests of
    the combined snapshot; DeletesNotMergeable as the module says. Before
    v3 there are none here (a delete file refused the merge already)."""
    out = SourceDeletes()
    if source.format_version < v3.V3:
        return out
    base_ids = {s.snapshot_id for s in base.snapshots}
    known = {m.manifest_path for m in target_manifests}
    base_seq = int(getattr(base, "last_sequence_number", 0))
    by_file: dict[str, str] = {}  # the data files the source's vectors delete from
    for m in source_manifests:
        if m.content != ManifestContent.DELETES or m.manifest_path in known:
            continue
        new: list[ManifestEntry] = []
        for e in v3.read_entries(io, m):
            path = e.data_file.file_path
            if e.status == ManifestEntryStatus.DELETED:
                if e.snapshot_id not in target_ids and (e.file_sequence_number or 0) <= base_seq:
                    raise DeletesNotMergeable(
                        f"the source replaced the merge base's delete file {path} (it deleted "
                        f"more rows of {referenced(e.data_file) or 'its data files'})")
                continue
            if e.snapshot_id in target_ids:
                continue  # the base's (or merged before): the target has it
            if not _is_vector(e.data_file):
                raise DeletesNotMergeable(
                    f"the source added delete files that are not deletion vectors ({path})")
            ref = referenced(e.data_file)
            assert ref is not None
            by_file[ref] = path
            new.append(e)
        if not new:
            continue
        out.vectors += len(new)
        out.rows += sum(e.data_file.record_count for e in new)
        if len(new) == (m.added_files_count or 0) and not (m.existing_files_count or 0) \
                and not (m.deleted_files_count or 0):
            out.manifests.append(m)  # only the source's new vectors: reused
            continue
        out.rewritten += 1
        if write:
            out.manifests.append(_write(io, m, new, source, snap_id, folder))
    both = sorted(set(by_file) & _target_vectors(io, target_manifests, base_ids))
    if both:
        raise DeletesNotMergeable(
            f"both sides deleted rows of data file {both[0]} (a deletion vector on each side"
            + (f"; {len(both) - 1} more files alike)" if len(both) > 1 else ")"))
    return out


def _target_vectors(io: FileIO, target_manifests: list[ManifestFile],
                    base_ids: set[int]) -> set[str]:
    """The data files the target's live vectors added since the base delete from."""
    out: set[str] = set()
    for m in target_manifests:
        if m.content != ManifestContent.DELETES:
            continue
        for e in v3.read_entries(io, m):
            if e.status != ManifestEntryStatus.DELETED and e.snapshot_id not in base_ids:
                ref = referenced(e.data_file)
                if ref is not None:
                    out.add(ref)
    return out


def _write(io: FileIO, m: ManifestFile, entries: list[ManifestEntry], meta: TableMetadata,
           snap_id: int, folder: str) -> ManifestFile:
    spec = next(p for p in meta.partition_specs if p.spec_id == m.partition_spec_id)
    path = f"{folder}/{uuid.uuid4()}-m0.avro"
    with v3.DeleteManifestWriterV3(spec, meta.schema(), io.new_output(path), snap_id,
                                   "deflate") as w:
        for e in entries:
            w.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED,
                                                snapshot_id=snap_id, data_file=e.data_file))
    return w.to_manifest_file()
