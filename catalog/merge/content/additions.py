"""What the source of a content merge added since the merge base, as
manifests of the combined snapshot (catalog.merge.content.tables): the
source's manifests that hold only files it added, reused as they are, and
those the engine folded older files into, rewritten with the new files
only (format v3: with the v3 manifest writer, the files' row ids left for
the combined snapshot's manifest list to give)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from pyiceberg.io import FileIO
from pyiceberg.manifest import (
    DataFile,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    write_manifest,
)
from pyiceberg.table.metadata import TableMetadata

from catalog.iceberg_v3 import manifests as v3
from catalog.merge.content.not_mergeable import NotMergeable


@dataclass
class Additions:
    """What the source added since the base, as manifests of the new snapshot."""

    manifests: list[ManifestFile] = field(default_factory=list)
    rewritten: int = 0
    files: int = 0
    rows: int = 0


def source_additions(io: FileIO, source: TableMetadata, source_manifests: list[ManifestFile],
                     target_manifests: list[ManifestFile],
                      target_ids: set[int], snap_id: int, location: str,
                      write: bool, version: int) -> Additions:
    """The source's manifests the target does not hold (by path) that a
    snapshot the target does not know wrote (the base's were written by the
    base's snapshots, which the target keeps), each holding only data files
    it added; one the engine merged with older files is rewritten with the
    new ones only."""
    out = Additions()
    skip = {m.manifest_path for m in target_manifests}
    for m in source_manifests:
        if m.manifest_path in skip or m.added_snapshot_id in target_ids:
            continue
        if version >= v3.V3 and m.content == ManifestContent.DELETES:
            continue  # deletion vectors: content.deletes
        if _only_added_files(m):
            # v3: numbered afresh by the combined snapshot's manifest list.
            out.manifests.append(v3.without_row_ids(m) if version >= v3.V3 else m)
            out.files += m.added_files_count or 0
            out.rows += m.added_rows_count or 0
            continue
        kept = _new_files(io, m, target_ids, version)
        if kept:
            out.rewritten += 1
            out.files += len(kept)
            out.rows += sum(f.record_count for f in kept)
            if write:
                out.manifests.append(_write_manifest(io, m, kept, source, snap_id, location,
                                                     version))
    return out


def _only_added_files(m: ManifestFile) -> bool:
    """Whether a manifest the source added holds only data files it added
    (checked on the manifest list's counts, whatever the summaries said);
    delete files refuse the merge."""
    if m.content != ManifestContent.DATA:
        raise NotMergeable("the source added delete files or deletion vectors "
                           f"({m.manifest_path})")
    return not (m.deleted_files_count or 0) and not (m.existing_files_count or 0)


def _new_files(io: FileIO, m: ManifestFile, target_ids: set[int],
               version: int) -> list[DataFile]:
    """The files of a manifest the engine merged (Iceberg's merge-append
    folds small manifests together, older files as EXISTING) that snapshots
    the target does not know added. A file such a snapshot marks deleted
    refuses the merge."""
    keep = []
    entries = (v3.read_entries(io, m) if version >= v3.V3
               else m.fetch_manifest_entry(io, discard_deleted=False))
    for e in entries:
        new = e.snapshot_id not in target_ids
        if e.status == ManifestEntryStatus.DELETED:
            if new:
                raise NotMergeable(f"the source removed {e.data_file.file_path}")
            continue
        if new:
            keep.append(v3.new_file(e.data_file) if version >= v3.V3 else e.data_file)
    return keep


def _write_manifest(io: FileIO, m: ManifestFile, files: list[DataFile],
                    source: TableMetadata, snap_id: int, list_location: str,
                    version: int) -> ManifestFile:
    """Those files as a new manifest of the combined snapshot."""
    spec = next(p for p in source.partition_specs if p.spec_id == m.partition_spec_id)
    path = f"{list_location.rsplit('/', 1)[0]}/{uuid.uuid4()}-m0.avro"
    output = io.new_output(path)
    with (v3.ManifestWriterV3(spec, source.schema(), output, snap_id, "deflate")
          if version >= v3.V3 else
          write_manifest(format_version=source.format_version, spec=spec,
                         schema=source.schema(), output_file=output, snapshot_id=snap_id,
                         avro_compression="deflate")) as w:
        for f in files:
            w.add_entry(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED,
                                                snapshot_id=snap_id, data_file=f))
    return w.to_manifest_file()
