"""Merging an Iceberg table that both sides of a merge changed, when both
only added data: the target's metadata plus one ``append`` snapshot on top
of the target's current one, adding exactly the data files the source
added. The source's manifests that hold only its added files are reused as
they are (no data written, no unchanged manifest rewritten:
catalog.merge.content.additions); the new manifest list is the target's
plus those. The source's own snapshots join the snapshot list, so time
travel to either parent still reads.

Anything else stays a conflict, with the reason: a snapshot that removed
data or added delete files or deletion vectors (read from the summaries and
checked against the manifest lists, not trusted by name), a rewrite, a
history that does not continue the merge base's, or the same thing changed
differently on both sides (schema, partition spec, sort order, a property).

Format v3 (row lineage): both sides numbered their new rows from the
``next-row-id`` they forked with, so the same ids. The combined snapshot
numbers the rows it brings in afresh, from past both sides' ``next-row-id``
(its manifest list gives the source's manifests new ``first_row_id``s; the
target's keep theirs), and the table's ``next-row-id`` moves past them: no
two rows of a snapshot share a ``_row_id``. A side that upgraded the table
to v3 makes the result v3."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Set
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestFile, write_manifest_list
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRef, SnapshotRefType
from pyiceberg.table.snapshots import Operation, Snapshot, SnapshotLogEntry, Summary

from catalog.iceberg_v3 import manifests as v3
from catalog.iceberg_v3.lineage import merged_row_ids
from catalog.iceberg_v3.metadata import upgraded
from catalog.merge.content.additions import Additions, source_additions
from catalog.merge.content.deletes import DeletesNotMergeable, SourceDeletes, source_deletes
from catalog.merge.content.not_mergeable import NotMergeable
from catalog.metadata.fileio import file_io

# Summary fields that say a snapshot took something away or added deletes.
_REMOVING = ("deleted-data-files", "deleted-records", "removed-delete-files",
             "added-delete-files", "added-position-deletes", "added-equality-deletes",
             "removed-files-size", "added-position-delete-files",
             "added-equality-delete-files", "added-dvs", "removed-dvs")
# What a v3 snapshot adding deletion vectors (and replacing its own) says.
_DELETION_VECTORS = ("added-delete-files", "added-dvs", "added-position-deletes",
                     "added-position-delete-files", "removed-delete-files", "removed-dvs",
                     "removed-position-deletes", "removed-files-size")


@dataclass
class TableMerge:
    metadata: TableMetadata
    manifest_list: str
    combined: dict[str, Any] = field(default_factory=dict)
    # Every file written (the manifest list, rewritten manifests).
    written: list[str] = field(default_factory=list)


# Recorded on a combined snapshot: the source snapshot it brought in, so a
# later merge from the same branch knows the base's files are in already.
MERGED_FROM = "sapwood.merged-snapshot-id"


def merge_tables(base: TableMetadata, source: TableMetadata, target: TableMetadata,
                 manifest_list_location: Callable[[int], str], write: bool) -> TableMerge:
    """The combined metadata (its manifest list written when ``write``)."""
    if source.format_version == v3.V3 > target.format_version:
        target = upgraded(target)
    src_walk = _since_base(base, source, "source")
    tgt_walk = _since_base(base, target, "target")
    for side, walked in (("source", src_walk), ("target", tgt_walk)):
        for snap in walked:
            _only_adds(side, snap, target.format_version)
    io = file_io(target.location)
    target_manifests = _manifests(io, target)
    target_ids = {s.snapshot_id for s in target.snapshots}
    updates, taken = _metadata_changes(base, source, target)
    seq = max(_last_sequence(target), _last_sequence(source)) + 1
    src_only = [s for s in source.snapshots if s.snapshot_id not in target_ids]
    snap_id = _new_id(target_ids | {s.snapshot_id for s in src_only})
    location = manifest_list_location(snap_id)
    source_manifests = _manifests(io, source)
    added = source_additions(io, source, source_manifests, target_manifests, target_ids,
                             snap_id, location, write, target.format_version)
    try:
        dels = source_deletes(io, base, source, source_manifests, target_manifests,
                              target_ids, snap_id, location.rsplit("/", 1)[0], write)
    except DeletesNotMergeable as e:
        raise NotMergeable(str(e)) from None
    rows = merged_row_ids(target, source, target_manifests, added.rows)
    if write:
        manifests = [*target_manifests, *added.manifests, *dels.manifests]
        if rows is not None:
            with v3.ManifestListWriterV3(io.new_output(location), snap_id,
                                         target.current_snapshot_id, seq, rows[0],
                                         "deflate") as w3:
                w3.add_manifests(manifests)
            assert w3.next_row_id == rows[0] + rows[1]
        else:
            with write_manifest_list(format_version=target.format_version,
                                     output_file=io.new_output(location), snapshot_id=snap_id,
                                     parent_snapshot_id=target.current_snapshot_id,
                                     sequence_number=seq, avro_compression="deflate") as w:
                w.add_manifests(manifests)
    meta = _combined_metadata(target, source, updates, src_only, snap_id, seq, location,
                              added, rows, dels)
    combined = {
        "files": {"source": added.files, "target": _sum(tgt_walk, "added-data-files")},
        "rows": {"source": added.rows, "target": _sum(tgt_walk, "added-records")},
        **({"rowIds": {"first": rows[0], "added": rows[1]}} if rows is not None else {}),
        **({"deletionVectors": {"source": dels.vectors, "deletedRows": dels.rows}}
           if dels.vectors else {}),
        "manifestsReused": (len(added.manifests) - added.rewritten
                            + len(dels.manifests) - dels.rewritten),
        **({"manifestsRewritten": added.rewritten + dels.rewritten}
           if added.rewritten + dels.rewritten else {}),
        **({"taken": taken} if taken else {}),
    }
    written = [location, *(m.manifest_path for m in [*added.manifests, *dels.manifests]
                           if m.added_snapshot_id == snap_id)] if write else []
    return TableMerge(meta, location, combined, written)


def _combined_metadata(target: TableMetadata, source: TableMetadata, updates: dict[str, Any],
                       src_only: list[Snapshot], snap_id: int, seq: int, location: str,
                       added: Additions, rows: tuple[int, int] | None,
                       dels: SourceDeletes) -> TableMetadata:
    """The target's metadata with the source's snapshots and one append
    snapshot adding exactly the source's files, current on main."""
    current = target.snapshot_by_id(target.current_snapshot_id) \
        if target.current_snapshot_id is not None else None
    totals = _totals(current, added.files, added.rows, dels)
    if source.current_snapshot_id is not None:
        totals[MERGED_FROM] = str(source.current_snapshot_id)
    now_ms = max(int(time.time() * 1000), target.last_updated_ms + 1)
    schema_id = updates.get("current_schema_id", target.current_schema_id)
    snapshot = Snapshot(snapshot_id=snap_id, parent_snapshot_id=target.current_snapshot_id,
                        sequence_number=seq, timestamp_ms=now_ms, manifest_list=location,
                        summary=Summary(dels.operation(added.files > 0), **totals),
                        schema_id=schema_id,
                        first_row_id=rows[0] if rows else None,
                        added_rows=rows[1] if rows else None)
    refs = dict(target.refs)
    refs[MAIN_BRANCH] = SnapshotRef(snapshot_id=snap_id, snapshot_ref_type=SnapshotRefType.BRANCH,
                                    min_snapshots_to_keep=None, max_snapshot_age_ms=None,
                                    max_ref_age_ms=None)
    return target.model_copy(update={
        **updates,
        "snapshots": [*target.snapshots, *src_only, snapshot],
        "current_snapshot_id": snap_id,
        "last_sequence_number": seq,
        "last_updated_ms": now_ms,
        "refs": refs,
        "snapshot_log": [*target.snapshot_log,
                         SnapshotLogEntry(snapshot_id=snap_id, timestamp_ms=now_ms)],
        **({"next_row_id": rows[0] + rows[1]} if rows else {}),
    })


def _manifests(io: FileIO, meta: TableMetadata) -> list[ManifestFile]:
    """The current snapshot's manifests (v3: with their ``first_row_id``)."""
    snap = meta.snapshot_by_id(meta.current_snapshot_id) \
        if meta.current_snapshot_id is not None else None
    if snap is None:
        return []
    if meta.format_version >= v3.V3:
        return v3.read_manifest_list(io, snap.manifest_list)
    return snap.manifests(io)


def _since_base(base: TableMetadata, side: TableMetadata, name: str) -> list[Snapshot]:
    """The side's snapshots since it forked from the base's history, newest
    first: those reachable from its current snapshot through parents and the
    sources combined snapshots brought in (MERGED_FROM), and not from the
    base's current one. A table's history is a graph, as a branch's commits
    are: a combined snapshot has two parents, the target's snapshot it sits
    on and the source's it brought in. The side continues the base's
    history when the base's current snapshot is reachable so, at whatever
    depth (brought in by a merge of a merge); anything else (a rollback, a
    replaced table) is refused."""
    in_base: set[int] = set()
    for _ in _walk(base, base.current_snapshot_id, frozenset(), in_base):
        pass
    seen: set[int] = set()
    walked = list(_walk(side, side.current_snapshot_id, in_base, seen))
    if base.current_snapshot_id is not None and base.current_snapshot_id not in seen:
        raise NotMergeable(f"the {name}'s table history does not continue the merge "
                           "base's (rolled back or replaced)")
    return sorted(walked, key=lambda s: (s.sequence_number or 0, s.timestamp_ms),
                  reverse=True)


def _walk(meta: TableMetadata, start: int | None, stop: Set[int],
          seen: set[int]) -> Iterator[Snapshot]:
    """The snapshots reachable from ``start`` through parents and brought-in
    sources, not going past ``stop``; every id met (found or not: an expired
    snapshot's id still counts as reached) goes into ``seen``."""
    by_id = {s.snapshot_id: s for s in meta.snapshots}  # snapshot_by_id scans the list
    todo = [start]
    while todo:
        cur = todo.pop()
        if cur is None or cur in seen:
            continue
        seen.add(cur)
        snap = by_id.get(cur)
        if cur in stop or snap is None:
            continue
        yield snap
        todo.extend((_brought(snap), snap.parent_snapshot_id))


def _brought(snap: Snapshot) -> int | None:
    """The source snapshot a combined snapshot brought in (None: not one)."""
    value = (snap.summary.additional_properties if snap.summary else {}).get(MERGED_FROM)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _only_adds(side: str, snap: Snapshot, version: int) -> None:
    """Whether a side's snapshot only added (v3: deletion vectors count as
    added; content.deletes checks them on the manifests)."""
    summary = snap.summary
    op = summary.operation if summary is not None else None
    props = summary.additional_properties if summary is not None else {}
    if op == Operation.REPLACE:
        raise NotMergeable(f"the {side} rewrote data files (snapshot {snap.snapshot_id}: "
                           "replace, a compaction)")
    if op not in (Operation.APPEND, Operation.OVERWRITE, Operation.DELETE):
        raise NotMergeable(f"the {side}'s snapshot {snap.snapshot_id} has no known operation")
    removing = {k: v for k, v in props.items() if k in _REMOVING and v not in ("0", "")
                and not (version >= v3.V3 and k in _DELETION_VECTORS)}
    if op != Operation.APPEND and (removing or not props):
        what = ", ".join(f"{k}={v}" for k, v in sorted(removing.items())) or "no summary"
        raise NotMergeable(f"the {side} removed or rewrote rows (snapshot {snap.snapshot_id}: "
                           f"{op.value}, {what})")
    if removing:
        raise NotMergeable(f"the {side}'s append {snap.snapshot_id} also removes or deletes "
                           f"({', '.join(sorted(removing))})")


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


def _totals(current: Snapshot | None, files: int, rows: int,
            dels: SourceDeletes) -> dict[str, str]:
    out: dict[str, str] = {"added-data-files": str(files), "added-records": str(rows)}
    if dels.vectors:
        out.update({"added-delete-files": str(dels.vectors), "added-dvs": str(dels.vectors),
                    "added-position-deletes": str(dels.rows)})
    before = current.summary.additional_properties if current and current.summary else {}
    for total, add in (("total-data-files", files), ("total-records", rows),
                       ("total-delete-files", dels.vectors),
                       ("total-position-deletes", dels.rows)):
        if total in before:
            out[total] = str(int(before[total]) + add)
    if "total-equality-deletes" in before:
        out["total-equality-deletes"] = before["total-equality-deletes"]
    return out


def _sum(snaps: list[Snapshot], key: str) -> int:
    """What the side's own snapshots added: a combined snapshot's additions
    are those of the snapshots it brought in, counted themselves when new
    (and in the base already when not)."""
    return sum(int((s.summary.additional_properties if s.summary else {}).get(key, 0) or 0)
               for s in snaps if _brought(s) is None)


def _new_id(known: set[int]) -> int:
    while True:
        # Java's scheme: a positive long from a random UUID.
        candidate = uuid.uuid4().int & ((1 << 63) - 1)
        if candidate and candidate not in known:
            return candidate


def _last_sequence(meta: TableMetadata) -> int:
    """Format v1 has no sequence numbers: every snapshot counts as 0."""
    return int(getattr(meta, "last_sequence_number", 0))
