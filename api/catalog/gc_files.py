"""Garbage collection of warehouse files: every metadata file, manifest
list, manifest, data and delete file that no table or view version still in
history (any content value a live commit reaches, filled by store.gc.collect's mark)
references, and that is older than the grace period, is deleted. Only files
under the warehouse root are ever looked at; a file written by a commit in
flight is younger than the grace period and stays.

The live set is read with PyIceberg: each live table metadata file, every
snapshot's manifest list, every manifest, every file it lists (statistics
files too); a view's is its metadata file."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import fsspec

from api.catalog.fileio import file_io
from api.catalog.files import MetadataFiles
from core.content import Content, IcebergTable, IcebergView, MaterializedView
from core.mv.metadata import table_part


@dataclass
class FilesReport:
    dry_run: bool
    live_files: int = 0
    files_seen: int = 0
    removed_files: int = 0
    removed_bytes: int = 0
    kept_young: int = 0
    seconds: float = 0.0
    removed: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        verb = "would remove" if self.dry_run else "removed"
        return (f"warehouse: {self.files_seen} files, {self.live_files} live; {verb} "
                f"{self.removed_files} files ({self.removed_bytes:,} bytes); "
                f"{self.kept_young} unreferenced but younger than the grace period; "
                f"{self.seconds:.2f} s")


def live_files(files: MetadataFiles, contents: Iterable[Content]) -> set[str]:
    """Every file the given table and view versions reference (normalised paths)."""
    out: set[str] = set()
    seen_lists: set[str] = set()
    seen_manifests: set[str] = set()
    for c in contents:
        loc = getattr(c, "metadata_location", None)
        if not loc:
            continue
        out.add(_norm(loc))
        if isinstance(c, IcebergView):
            continue
        if not isinstance(c, IcebergTable | MaterializedView):
            continue
        # A materialized view's storage is its metadata file's table half.
        meta = (files.table(loc)[0] if isinstance(c, IcebergTable)
                else table_part(files.mv(loc)))
        io = file_io(meta.location)
        for stat in [*meta.statistics, *meta.partition_statistics]:
            out.add(_norm(stat.statistics_path))
        for snap in meta.snapshots:
            if snap.manifest_list in seen_lists:
                continue
            seen_lists.add(snap.manifest_list)
            out.add(_norm(snap.manifest_list))
            for m in snap.manifests(io):
                out.add(_norm(m.manifest_path))
                if m.manifest_path in seen_manifests:
                    continue
                seen_manifests.add(m.manifest_path)
                for e in m.fetch_manifest_entry(io, discard_deleted=False):
                    out.add(_norm(e.data_file.file_path))
    return out


def collect_files(files: MetadataFiles, warehouse: str, contents: Iterable[Content],
                  grace_s: float, dry_run: bool) -> FilesReport:
    report = FilesReport(dry_run)
    t = time.perf_counter()
    live = live_files(files, contents)
    report.live_files = len(live)
    fs, root = fsspec.core.url_to_fs(warehouse)
    horizon = time.time() - grace_s
    found = fs.find(root, detail=True) if fs.exists(root) else {}
    for path, info in found.items():
        if info.get("type") != "file":
            continue
        report.files_seen += 1
        # fsspec lists paths in its own form already (no scheme): compare as is.
        if path.rstrip("/") in live:
            continue
        if _mtime(info) >= horizon:
            report.kept_young += 1
            continue
        report.removed_files += 1
        report.removed_bytes += int(info.get("size") or 0)
        report.removed.append(path)
        if not dry_run:
            fs.rm(path)
    report.seconds = time.perf_counter() - t
    return report


def _mtime(info: dict[str, object]) -> float:
    m = info.get("mtime") or info.get("LastModified") or info.get("created") or 0
    return m.timestamp() if hasattr(m, "timestamp") else float(m)  # type: ignore[union-attr, arg-type]


def _norm(location: str) -> str:
    """The path part of a location, as fsspec lists it."""
    return fsspec.core.url_to_fs(location)[1].rstrip("/")
