"""Integrity of the warehouse (``sapwood fsck --files``): every file that a
table or view version still in history references — its metadata file,
every snapshot's manifest list, every manifest, every data, delete and
statistics file — must exist. Each missing file is reported with what
needs it: the content (id, keys), the references whose history holds it,
and the snapshots.

Which versions count is gc's mark: every reference head and every commit a
reflog entry within the grace period names, through every parent. The
warehouse is listed once; files outside it (external locations) are looked
up one by one. Metadata files are read with PyIceberg. A file that is there
but cannot be read as what it should be (a manifest list that is not Avro
...) is reported as damaged, with the same names, and the check goes on
with the rest.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import fsspec

from catalog.maintenance.referenced import Damaged, Need, references
from catalog.metadata.files import MetadataFiles
from core.retention import DEFAULT_GRACE_S
from store import Store
from store.gc import live_contents

# What a report names at most per missing file (snapshots, keys, references).
_SHOWN = 20


@dataclass
class Missing:
    path: str
    kind: str  # metadata, manifest-list, manifest, data, delete, deletion-vector, statistics
    needs: list[Need] = field(default_factory=list)
    manifest: str | None = None  # for data and delete files: the manifest listing it
    keys: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)

    @property
    def snapshots(self) -> list[int]:
        return sorted({n.snapshot_id for n in self.needs if n.snapshot_id is not None})

    def __str__(self) -> str:
        ids = sorted({n.content_id for n in self.needs})
        where = (f"on {', '.join(self.refs)}" if self.refs
                 else "in no reference's history now (a reflog entry within the grace)")
        snaps = f"; snapshots {', '.join(map(str, self.snapshots[:_SHOWN]))}" \
            if self.snapshots else ""
        via = f" (listed by {self.manifest})" if self.manifest else ""
        return (f"missing {self.kind} file {self.path}{via}: needed by "
                f"{', '.join(self.keys) or 'content ' + ', '.join(ids)} {where}{snaps}")


@dataclass
class FilesCheck:
    versions: int = 0
    files: int = 0
    missing: list[Missing] = field(default_factory=list)
    damaged: list[Damaged] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.missing and not self.damaged

    @property
    def problems(self) -> list[Missing | Damaged]:
        """Every missing and damaged file, by path."""
        return sorted([*self.missing, *self.damaged], key=lambda p: p.path)

    def __str__(self) -> str:
        return (f"warehouse: {self.files} files referenced by {self.versions} table and view "
                f"versions, {len(self.missing)} missing, {len(self.damaged)} damaged; "
                f"{self.seconds:.2f} s")


def check_files(store: Store, files: MetadataFiles, warehouse: str,
                grace_s: float | None = None) -> FilesCheck:
    """``grace_s``: versions a reflog entry this recent names count too
    (default: SAPWOOD_GC_GRACE_S, else gc's default)."""
    if grace_s is None:
        grace_s = float(os.environ.get("SAPWOOD_GC_GRACE_S", DEFAULT_GRACE_S))
    report = FilesCheck()
    t = time.perf_counter()
    contents = live_contents(store, grace_s)
    report.versions = sum(1 for c in contents if getattr(c, "metadata_location", None))
    fs, root = fsspec.core.url_to_fs(warehouse)
    listed = {p.rstrip("/") for p, info in (fs.find(root, detail=True) if fs.exists(root)
                                            else {}).items() if info.get("type") == "file"}
    root = root.rstrip("/")
    missing: dict[str, Missing] = {}
    seen: set[str] = set()
    damaged: list[Damaged] = []
    for kind, path, need, manifest in references(files, contents, damaged):
        if path not in seen:
            seen.add(path)
            if _exists(path, root, listed):
                continue
            missing[path] = Missing(path, kind, manifest=manifest)
        elif path not in missing:
            continue
        gone = missing[path]
        if len(gone.needs) < 10 * _SHOWN:
            gone.needs.append(need)
    report.files = len(seen)
    name(store, [*missing.values(), *damaged])
    report.missing = sorted(missing.values(), key=lambda m: m.path)
    report.damaged = sorted(damaged, key=lambda d: d.path)
    report.seconds = time.perf_counter() - t
    return report


def _exists(path: str, root: str, listed: set[str]) -> bool:
    if path == root or path.startswith(root + "/"):
        return path in listed
    try:  # an external location (SAPWOOD_ALLOW_EXTERNAL_LOCATIONS)
        fs, p = fsspec.core.url_to_fs(path)
        return bool(fs.exists(p))
    except (OSError, ValueError):
        return False


def name(store: Store, missing: Sequence[Missing | Damaged]) -> None:
    """The keys and references that need each missing (or damaged) file:
    per content id, the references whose history put it (the change index),
    and the keys it was put under there."""
    ids = {n.content_id for m in missing for n in m.needs}
    if not ids:
        return
    refs = _all_refs(store)
    by_id: dict[str, tuple[set[str], set[str]]] = {i: (set(), set()) for i in ids}
    for name, head in refs:
        for cid in ids:
            commits = store.lineage(f"@{head}", cid)
            if not commits:
                continue
            by_id[cid][1].add(name)
            for c in commits[:_SHOWN]:
                for op in c.operations:
                    if op.entry is not None and op.entry.content_id == cid:
                        by_id[cid][0].add(str(op.key))
    for m in missing:
        keys: set[str] = set()
        names: set[str] = set()
        for cid in {n.content_id for n in m.needs}:
            keys |= by_id[cid][0]
            names |= by_id[cid][1]
        m.keys = sorted(keys)[:_SHOWN]
        m.refs = sorted(names)[:_SHOWN]


def _all_refs(store: Store) -> list[tuple[str, str]]:
    out, token = [], None
    while True:
        page = store.list_references(token, 1000)
        out += [(r.name, r.hash) for r in page.items]
        token = page.next_token
        if not token:
            return out
