"""Garbage collection of warehouse files: every metadata file, manifest
list, manifest, data and delete file that no table or view version still in
history (any content value a live commit reaches, filled by store.gc.collect's mark)
references is deleted, unless it may belong to a commit still in flight.
Only files under the warehouse root are ever looked at.

A client writes its files (data, manifests, the manifest list) before it
commits, so a file nothing references yet may be part of a commit about to
land. Two rules keep such files:

* **The write window.** A file written after the mark began, less the
  longest a writer may take between writing a file and committing it
  (``SAPWOOD_GC_WRITE_WINDOW_S``, default an hour, never below
  MIN_WRITE_WINDOW_S), is kept whatever the grace period. A commit that lands
  after the mark began wrote its files within the window before it.
* **The heads are read again** after the warehouse is listed and before
  anything is deleted: every commit that landed since the mark (on any
  reference, down to the commits the mark found) adds the files its values
  reference to the live set — a branch moved back onto an old commit, a
  registered table.

And a table commit whose new snapshot's manifest list is not there is
refused (MetadataFiles.require_snapshots), so a writer slower than the
window gets an error, never a table that cannot be read.

The live set is read with PyIceberg: each live table metadata file, every
snapshot's manifest list, every manifest, every file it lists (statistics
files too); a view's is its metadata file.

**Damage stops nothing but its own table.** A file a live version
references that is there but cannot be read (a manifest list that is not
Avro, metadata that is not JSON, a read that timed out) hides which files
that table needs, so every file in that table's folders (its location and
``write.*.path`` places, from its metadata or the location index) is kept,
the damaged file and the tables and references that need it are reported,
and the rest of the warehouse is collected as usual."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import fsspec

from catalog.kernel import Catalog
from catalog.maintenance.expiry import Expired, expire_branch
from catalog.maintenance.fsck_files import name
from catalog.maintenance.referenced import (
    Damaged,
    in_folders,
    kept_folders,
    references,
    storage_fields,
)
from catalog.metadata.claims import places
from catalog.metadata.files import MetadataFiles
from catalog.metadata.locations import Locations
from core.commits import RefType
from core.content import Content
from core.errors import InvalidInputError, SapwoodError
from core.retention import DEFAULT_GRACE_S, MAX_GRACE_S, policy_of
from store import Store
from store.gc import GcReport, check_grace, collect, contents_since

# The longest a writer may take between writing a file and committing it
# (docs/operations.md): an hour by default; never below the floor, which is
# ten times what a PyIceberg append or the CLI takes.
DEFAULT_WRITE_WINDOW_S = 3600.0
MIN_WRITE_WINDOW_S = 10.0


@dataclass
class FilesReport:
    dry_run: bool
    live_files: int = 0
    files_seen: int = 0
    removed_files: int = 0
    removed_bytes: int = 0
    kept_young: int = 0
    # Unreferenced at the mark, referenced by a commit that landed since.
    kept_landed: int = 0
    # Unreferenced, in the folders of a table whose files could not all be read.
    kept_damaged: int = 0
    seconds: float = 0.0
    removed: list[str] = field(default_factory=list)
    damaged: list[Damaged] = field(default_factory=list)

    def __str__(self) -> str:
        verb = "would remove" if self.dry_run else "removed"
        lines = [f"warehouse: {self.files_seen} files, {self.live_files} live; {verb} "
                 f"{self.removed_files} files ({self.removed_bytes:,} bytes); "
                 f"{self.kept_young} unreferenced but younger than the grace period or the "
                 f"write window; {self.kept_landed} referenced by commits since the mark; "
                 f"{self.kept_damaged} in the folders of tables with damaged files; "
                 f"{self.seconds:.2f} s"]
        lines += [f"kept the folders of a table with a {d}" for d in self.damaged]
        return "\n".join(lines)


def live_files(files: MetadataFiles, contents: Iterable[Content],
               damaged: list[Damaged] | None = None) -> set[str]:
    """Every file the given table and view versions reference (normalised
    paths); files that cannot be read are added to ``damaged``."""
    return {path for _, path, _, _ in references(files, contents, damaged)}


def write_window(seconds: float | None = None) -> float:
    """The write window to use: ``seconds``, else SAPWOOD_GC_WRITE_WINDOW_S,
    else the default; never below the floor (a 400 / exit 1 says so)."""
    if seconds is None:
        seconds = float(os.environ.get("SAPWOOD_GC_WRITE_WINDOW_S", DEFAULT_WRITE_WINDOW_S))
    if not math.isfinite(seconds) or not MIN_WRITE_WINDOW_S <= seconds <= MAX_GRACE_S:
        raise InvalidInputError(
            f"Invalid write window {seconds!r}: expected seconds from {MIN_WRITE_WINDOW_S:g} "
            f"to {MAX_GRACE_S} (how long a writer may take between writing a file and "
            "committing it; files that young are never deleted)")
    return seconds


def collect_files(files: MetadataFiles, warehouse: str, contents: Iterable[Content],
                  grace_s: float, dry_run: bool, *, mark_started_s: float,
                  window_s: float, since: Callable[[], Iterable[Content]] | None = None,
                  claimed: Callable[[], dict[str, set[str]]] | None = None,
                  ) -> FilesReport:
    """``mark_started_s``: when the mark read the references; ``since``: the
    content values of commits that landed after it, read once the
    warehouse is listed and before anything is deleted; ``claimed``: the
    location index's places by content id (store.locations.owners), for
    the folders of a table whose metadata cannot be read."""
    report = FilesReport(dry_run)
    t = time.perf_counter()
    live = live_files(files, contents, report.damaged)
    report.live_files = len(live)
    fs, root = fsspec.core.url_to_fs(warehouse)
    horizon = mark_started_s - max(grace_s, window_s)
    # A link is listed as "other" (fsspec does not follow one): never removed.
    found = fs.find(root, detail=True) if fs.exists(root) else {}
    doomed: list[tuple[str, int]] = []
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
        doomed.append((path, int(info.get("size") or 0)))
    if doomed and since is not None:
        landed = live_files(files, since(), report.damaged)
        report.kept_landed = sum(1 for p, _ in doomed if p.rstrip("/") in landed)
        doomed = [(p, n) for p, n in doomed if p.rstrip("/") not in landed]
    if report.damaged:
        folders = kept_folders(report.damaged, claimed() if claimed is not None else {})
        kept = {p for p, _ in doomed if in_folders(p, folders)}
        report.kept_damaged = len(kept)
        doomed = [(p, n) for p, n in doomed if p not in kept]
    for path, size in doomed:
        report.removed_files += 1
        report.removed_bytes += size
        report.removed.append(path)
        if not dry_run:
            fs.rm(path)
    report.seconds = time.perf_counter() - t
    return report


def collect_all(store: Store, files: MetadataFiles, warehouse: str,
                grace_s: float | None = None, window_s: float | None = None,
                dry_run: bool = False) -> tuple[GcReport, FilesReport | None]:
    """The whole garbage collection (``sapwood gc`` and the admin endpoint):
    the store's objects, then the warehouse's files; the files step is
    skipped when the store's sweep stopped (a commit needed what it would
    have removed: run again)."""
    if grace_s is None:
        grace_s = float(os.environ.get("SAPWOOD_GC_GRACE_S", DEFAULT_GRACE_S))
    window = write_window(window_s)
    live: list[Content] = []
    expiries = expire_snapshots(store, files, warehouse, dry_run)
    report = collect(store, grace_s=check_grace(grace_s), dry_run=dry_run, contents=live)
    for e in expiries:
        if e.snapshots:
            report.snapshots_expired[e.branch] = dict(e.snapshots)
        if e.commit:
            report.expiry_commits[e.branch] = e.commit
    if report.aborted:
        return report, None
    out = collect_files(files, warehouse, live, grace_s, dry_run,
                        mark_started_s=report.mark_started_s, window_s=window,
                        since=lambda: contents_since(store, report),
                        claimed=store.locations.owners)
    name(store, out.damaged)
    if not dry_run:  # for /metrics of the process that ran it (the admin endpoint)
        store.stats.add("gc_removed_files", out.removed_files)
        keep_claims(store, files, live)
    return report, out


def expire_snapshots(store: Store, files: MetadataFiles, warehouse: str,
                     dry_run: bool) -> list[Expired]:
    """Snapshot expiry on every branch a retention policy covers (one commit
    each, catalog.maintenance.expiry), before the mark."""
    items = store.retention.policies()
    if not items:
        return []
    # Each table's next metadata file goes beside its current one, wherever
    # the table was allowed to live.
    catalog = Catalog(store, files, Locations(warehouse, allow_external=True))
    now_ms = int(time.time() * 1000)
    out = []
    for head in store.retention.heads():
        p = policy_of(items, head.name)
        if p is not None and head.type is RefType.BRANCH:
            out.append(expire_branch(catalog, head.name, p, now_ms, dry_run))
    return out


def keep_claims(store: Store, files: MetadataFiles, live: list[Content]) -> None:
    """The location index (store.locations) follows history: claims of
    objects no live commit holds go; objects that predate the index (or a
    catalog imported from one) get theirs, read from their metadata."""
    owners = store.locations.owners()
    ids = {c.id for c in live if c.id}
    store.locations.forget(set(owners) - ids)
    missing: dict[str, str] = {}
    for c in live:
        loc = getattr(c, "metadata_location", None)
        if c.id and c.id not in owners and loc:
            missing.setdefault(c.id, loc)
    rows = []
    for cid, loc in missing.items():
        try:
            doc = storage_fields(files.reader.read(loc))
            found = places(doc.get("location"), doc.get("properties") or {})
        except (SapwoodError, ValueError):
            continue  # an unreadable file claims nothing (fsck --files reports it)
        rows += [(p, cid) for p in found]
    store.locations.record(rows)


def _mtime(info: dict[str, Any]) -> float:
    """A listed file's modification time: local file systems give seconds,
    object stores a datetime."""
    m = info.get("mtime") or info.get("LastModified") or info.get("created") or 0
    return float(m.timestamp() if isinstance(m, datetime) else m)
