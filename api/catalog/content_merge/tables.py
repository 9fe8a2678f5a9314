"""Merging an Iceberg table that both sides of a merge changed, when both
only added data: the target's metadata plus one ``append`` snapshot on top
of the target's current one, adding exactly the data files the source
added. The source's manifests that hold only its added files are reused as
they are (no data written, no unchanged manifest rewritten); the new
manifest list is the target's plus those. The source's own snapshots join
the snapshot list, so time travel to either parent still reads.

Anything else stays a conflict, with the reason: a snapshot that removed
data or added delete files (read from the summaries and checked against
the manifest lists, not trusted by name), a rewrite, a history that does not
continue the merge base's, or the same thing changed differently on both
sides (schema, partition spec, sort order, a property)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.io import FileIO, load_file_io
from pyiceberg.manifest import ManifestContent, ManifestFile, write_manifest_list
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRef, SnapshotRefType
from pyiceberg.table.snapshots import Operation, Snapshot, SnapshotLogEntry, Summary

# Summary fields that say a snapshot took something away or added deletes.
_REMOVING = ("deleted-data-files", "deleted-records", "removed-delete-files",
             "added-delete-files", "added-position-deletes", "added-equality-deletes",
             "removed-files-size", "added-position-delete-files",
             "added-equality-delete-files")
_ADDED = ("added-data-files", "added-records", "added-files-size")


class NotMergeable(Exception):
    """Why the two sides cannot be combined (the conflict's reason)."""


@dataclass
class TableMerge:
    metadata: TableMetadata
    manifest_list: str
    combined: dict[str, Any] = field(default_factory=dict)


def merge_tables(base: TableMetadata, source: TableMetadata, target: TableMetadata,
                 manifest_list_location: Callable[[int], str], write: bool) -> TableMerge:
    """The combined metadata (its manifest list written when ``write``)."""
    src_chain = _added_snapshots(base, source, "source")
    tgt_chain = _added_snapshots(base, target, "target")
    io = load_file_io({}, target.location)
    for side, chain in (("source", src_chain), ("target", tgt_chain)):
        for snap in chain:
            _only_adds(side, snap)
    src_ids = {s.snapshot_id for s in src_chain}
    added = _added_manifests(io, source, src_ids) if src_chain else []
    updates, taken = _metadata_changes(base, source, target)
    seq = max(target.last_sequence_number, source.last_sequence_number) + 1
    known = {s.snapshot_id for s in target.snapshots} | src_ids
    snap_id = _new_id(known)
    location = manifest_list_location(snap_id)
    current = target.snapshot_by_id(target.current_snapshot_id) \
        if target.current_snapshot_id is not None else None
    target_manifests = current.manifests(io) if current is not None else []
    if write:
        with write_manifest_list(format_version=target.format_version,  # type: ignore[arg-type]
                                 output_file=io.new_output(location), snapshot_id=snap_id,
                                 parent_snapshot_id=target.current_snapshot_id,
                                 sequence_number=seq, avro_compression="deflate") as w:
            w.add_manifests([*target_manifests, *added])
    totals = _totals(current, src_chain)
    now_ms = max(int(time.time() * 1000), target.last_updated_ms + 1)
    schema_id = updates.get("current_schema_id", target.current_schema_id)
    snapshot = Snapshot(snapshot_id=snap_id, parent_snapshot_id=target.current_snapshot_id,
                        sequence_number=seq, timestamp_ms=now_ms, manifest_list=location,
                        summary=Summary(Operation.APPEND, **totals), schema_id=schema_id)
    src_only = [s for s in source.snapshots if s.snapshot_id in src_ids]
    refs = dict(target.refs)
    refs[MAIN_BRANCH] = SnapshotRef(snapshot_id=snap_id, snapshot_ref_type=SnapshotRefType.BRANCH)
    meta = target.model_copy(update={
        **updates,
        "snapshots": [*target.snapshots, *src_only, snapshot],
        "current_snapshot_id": snap_id,
        "last_sequence_number": seq,
        "last_updated_ms": now_ms,
        "refs": refs,
        "snapshot_log": [*target.snapshot_log,
                         SnapshotLogEntry(snapshot_id=snap_id, timestamp_ms=now_ms)],
    })
    combined = {
        "files": {"source": int(totals.get("added-data-files", 0)), "target": _sum(tgt_chain,
                                                                                 "added-data-files")},
        "rows": {"source": int(totals.get("added-records", 0)),
                 "target": _sum(tgt_chain, "added-records")},
        "manifestsReused": len([m for m in added if m.added_snapshot_id in src_ids]),
        **({"taken": taken} if taken else {}),
    }
    return TableMerge(meta, location, combined)


def _added_snapshots(base: TableMetadata, side: TableMetadata, name: str) -> list[Snapshot]:
    """The side's main-branch snapshots since the base's current one, oldest
    first; refused when its history does not continue the base's."""
    stop = base.current_snapshot_id
    out: list[Snapshot] = []
    cur = side.current_snapshot_id
    while cur is not None and cur != stop:
        snap = side.snapshot_by_id(cur)
        if snap is None:
            break
        out.append(snap)
        cur = snap.parent_snapshot_id
    if cur != stop:
        raise NotMergeable(f"the {name}'s table history does not continue the merge base's "
                           "(rolled back or replaced)")
    return list(reversed(out))


def _only_adds(side: str, snap: Snapshot) -> None:
    summary = snap.summary
    op = summary.operation if summary is not None else None
    props = summary.additional_properties if summary is not None else {}
    if op == Operation.REPLACE:
        raise NotMergeable(f"the {side} rewrote data files (snapshot {snap.snapshot_id}: "
                           "replace, a compaction)")
    if op not in (Operation.APPEND, Operation.OVERWRITE, Operation.DELETE):
        raise NotMergeable(f"the {side}'s snapshot {snap.snapshot_id} has no known operation")
    removing = {k: v for k, v in props.items() if k in _REMOVING and v not in ("0", "")}
    if op != Operation.APPEND and (removing or not props):
        what = ", ".join(f"{k}={v}" for k, v in sorted(removing.items())) or "no summary"
        raise NotMergeable(f"the {side} removed or rewrote rows (snapshot {snap.snapshot_id}: "
                           f"{op.value}, {what})")
    if removing:
        raise NotMergeable(f"the {side}'s append {snap.snapshot_id} also removes or deletes "
                           f"({', '.join(sorted(removing))})")


def _added_manifests(io: FileIO, source: TableMetadata, src_ids: set[int],
                     ) -> list[ManifestFile]:
    """The source's manifests that hold files its new snapshots added; each
    must hold data files added by them and nothing else (checked on the
    manifest list's counts, whatever the summaries said)."""
    current = source.snapshot_by_id(source.current_snapshot_id)  # type: ignore[arg-type]
    out = []
    for m in current.manifests(io) if current is not None else []:
        if m.added_snapshot_id not in src_ids:
            continue
        if m.content != ManifestContent.DATA:
            raise NotMergeable(f"the source added delete files ({m.manifest_path})")
        if (m.deleted_files_count or 0) or (m.existing_files_count or 0):
            raise NotMergeable(f"the source's manifest {m.manifest_path} also removes or "
                               "carries other files")
        out.append(m)
    return out


def _metadata_changes(base: TableMetadata, source: TableMetadata, target: TableMetadata,
                      ) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Schema, partition spec, sort order and properties: a change on one side
    is taken; the same change on both is fine; different changes conflict."""
    updates: dict[str, Any] = {}
    taken: dict[str, list[str]] = {}

    def one_side(what: str, b: Any, s: Any, t: Any) -> bool:
        """Whether the source's change must be taken."""
        if s in (b, t):
            return False
        if t != b:
            raise NotMergeable(f"both sides changed the {what} differently")
        taken.setdefault("source", []).append(what)
        return True

    if one_side("schema", base.schema().fields, source.schema().fields, target.schema().fields):
        ids = {s.schema_id for s in target.schemas}
        updates["schemas"] = [*target.schemas, *(s for s in source.schemas
                                                 if s.schema_id not in ids)]
        updates["current_schema_id"] = source.current_schema_id
        updates["last_column_id"] = max(source.last_column_id, target.last_column_id)
    if one_side("partition spec", base.spec().fields, source.spec().fields,
                target.spec().fields):
        ids = {s.spec_id for s in target.partition_specs}
        updates["partition_specs"] = [*target.partition_specs, *(
            s for s in source.partition_specs if s.spec_id not in ids)]
        updates["default_spec_id"] = source.default_spec_id
        updates["last_partition_id"] = max(source.last_partition_id or 0,
                                           target.last_partition_id or 0)
    if one_side("sort order", base.sort_order().fields, source.sort_order().fields,
                target.sort_order().fields):
        ids = {s.order_id for s in target.sort_orders}
        updates["sort_orders"] = [*target.sort_orders, *(
            s for s in source.sort_orders if s.order_id not in ids)]
        updates["default_sort_order_id"] = source.default_sort_order_id
    props = dict(target.properties)
    for k in sorted(set(base.properties) | set(source.properties) | set(target.properties)):
        b, s, t = (base.properties.get(k), source.properties.get(k), target.properties.get(k))
        if one_side(f"property {k}", b, s, t):
            if s is None:
                props.pop(k, None)
            else:
                props[k] = s
    if props != target.properties:
        updates["properties"] = props
    return updates, taken


def _totals(current: Snapshot | None, added: list[Snapshot]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k in _ADDED:
        n = _sum(added, k)
        if n:
            out[k] = str(n)
    before = current.summary.additional_properties if current and current.summary else {}
    for total, add in (("total-data-files", "added-data-files"),
                       ("total-records", "added-records"),
                       ("total-files-size", "added-files-size")):
        if total in before:
            out[total] = str(int(before[total]) + int(out.get(add, 0)))
    for k in ("total-delete-files", "total-position-deletes", "total-equality-deletes"):
        if k in before:
            out[k] = before[k]
    return out


def _sum(snaps: list[Snapshot], key: str) -> int:
    return sum(int((s.summary.additional_properties if s.summary else {}).get(key, 0) or 0)
               for s in snaps)


def _new_id(known: set[int]) -> int:
    while True:
        # Java's scheme: a positive long from a random UUID.
        candidate = uuid.uuid4().int & ((1 << 63) - 1)
        if candidate and candidate not in known:
            return candidate
