"""The JSON of a garbage collection and of an integrity check: what
``POST /api/v2/admin/gc`` and ``GET /api/v2/admin/fsck`` answer and what
``sapwood gc --json`` and ``sapwood fsck --json`` print, from one function
each."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from catalog.maintenance.fsck_files import FilesCheck
from catalog.maintenance.gc import FilesReport
from catalog.maintenance.referenced import Damaged
from store.fsck import FsckReport
from store.gc import GcReport

# Removed commits and files named in an answer, at most (the counts are whole).
LISTED = 1000


def gc_json(store: GcReport, files: FilesReport | None) -> dict[str, Any]:
    """``files`` is None when the store's sweep stopped (run again)."""
    body: dict[str, Any] = {
        "store": {f.name: getattr(store, f.name) for f in fields(store)
                  if f.name not in ("removed", "live")},
        "removedCommits": store.removed[:LISTED]}
    if files is not None:
        body["warehouse"] = {f.name: getattr(files, f.name) for f in fields(files)
                             if f.name not in ("removed", "damaged")}
        body["warehouse"]["damaged"] = [damaged_json(d) for d in files.damaged]
        body["removedFiles"] = files.removed[:LISTED]
    return body


def damaged_json(d: Damaged) -> dict[str, Any]:
    """A file that is there but cannot be read: which, why, and who needs it."""
    return {"path": d.path, "kind": d.kind, "problem": d.problem, "keys": d.keys,
            "references": d.refs, "contentIds": sorted({n.content_id for n in d.needs}),
            "metadataLocations": sorted({n.metadata_location for n in d.needs})[:20]}


def fsck_json(store: FsckReport, files: FilesCheck | None) -> dict[str, Any]:
    """What was checked and every problem found; ``ok`` says whether there
    was none. ``files`` is None unless the warehouse's files were checked."""
    body: dict[str, Any] = {
        "ok": store.ok and (files is None or files.ok),
        "store": {"refs": store.refs, "commits": store.commits,
                  "unreachableCommits": store.unreachable_commits,
                  "nodes": store.nodes, "contents": store.contents,
                  "changeIndexRows": store.index_rows,
                  "problems": [str(p) for p in store.problems]}}
    if files is not None:
        body["warehouse"] = {
            "versions": files.versions, "files": files.files,
            "missing": [{"path": m.path, "kind": m.kind, "manifest": m.manifest,
                         "keys": m.keys, "references": m.refs, "snapshots": m.snapshots,
                         "contentIds": sorted({n.content_id for n in m.needs})}
                        for m in files.missing],
            "damaged": [damaged_json(d) for d in files.damaged]}
    return body
