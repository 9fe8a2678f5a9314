"""Snapshot expiry inside table metadata, per branch: what gc does on each
branch a retention policy covers, before it marks what to keep.

A branch's tables keep their snapshots in their metadata for ever (every
commit of an Iceberg writer adds one, and the engines' own expiry is
refused: gc.enabled=false), so the files of every snapshot stay live while
the branch lives. Here, one commit per branch (author ``sapwood-gc``) gives
each table a metadata version without the snapshots Iceberg's own
``ExpireSnapshots`` would remove, reading the same table properties the
same way:

* ``history.expire.max-snapshot-age-ms`` (else the branch policy's
  ``keep``): older snapshots go, but ``history.expire.min-snapshots-to-keep``
  (default 1) of each branch's ancestry stay whatever their age;
* each table-level branch or tag (SnapshotRef) may set its own
  ``max-snapshot-age-ms`` / ``min-snapshots-to-keep``, and is removed when
  older than its ``max-ref-age-ms`` (else ``history.expire.max-ref-age-ms``;
  ``main`` never);
* a snapshot no ref's ancestry holds goes when older than the table's age.

The commit is planned against the branch head and planned again if the
branch moved (catalog.kernel.Catalog.write_at): a writer's commit in
between is never lost, and a table it changed is expired from its new
version."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.table.update import (
    RemoveSnapshotRefUpdate,
    RemoveSnapshotsUpdate,
    TableUpdate,
    update_table_metadata,
)

from catalog.kernel import Catalog, Change, Who
from catalog.tables import table_content
from catalog.targets import dotted
from core.commits import CommitResult, Operation, Put, ResolvedRef
from core.content import Content, ContentType, IcebergTable
from core.errors import SapwoodError
from core.keys import ContentKey
from core.numbers import INT64_MAX
from core.refs import parse_ref
from core.retention import Policy

GC_AUTHOR = "sapwood-gc"
MAX_AGE = "history.expire.max-snapshot-age-ms"
MIN_KEEP = "history.expire.min-snapshots-to-keep"
MAX_REF_AGE = "history.expire.max-ref-age-ms"
_PAGE = 1000


@dataclass
class Expired:
    """What one branch's expiry did (or, in a dry run, would do)."""

    branch: str
    snapshots: dict[str, int] = field(default_factory=dict)  # table → snapshots expired
    refs: dict[str, list[str]] = field(default_factory=dict)  # table → table refs removed
    commit: str | None = None


def plan(meta: TableMetadata, default_age_ms: int | None, now_ms: int,
         ) -> tuple[set[int], list[str]]:
    """The snapshots and table refs Iceberg's ExpireSnapshots would remove
    from ``meta`` at ``now_ms``, when a table sets no age of its own and
    its branch's policy keeps ``default_age_ms`` (None: no age limit)."""
    props = meta.properties
    age_ms = _int(props.get(MAX_AGE), default_age_ms)
    min_keep = max(1, _int(props.get(MIN_KEEP), 1) or 1)
    ref_age_ms = _int(props.get(MAX_REF_AGE), None)
    by_id = {s.snapshot_id: s for s in meta.snapshots}
    removed_refs: list[str] = []
    retained: set[int] = set()
    referenced: set[int] = set()
    for name, ref in meta.refs.items():
        snap = by_id.get(ref.snapshot_id)
        if snap is None:
            continue
        max_ref_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else ref_age_ms
        if name != MAIN_BRANCH and max_ref_age is not None and \
                now_ms - snap.timestamp_ms > max_ref_age:
            removed_refs.append(name)
            continue
        if ref.snapshot_ref_type == SnapshotRefType.TAG:
            retained.add(snap.snapshot_id)
            referenced.add(snap.snapshot_id)
            continue
        keep_age = ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else age_ms
        keep_n = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None \
            else min_keep
        oldest = now_ms - keep_age if keep_age is not None else None
        n = 0
        cur: Snapshot | None = snap
        while cur is not None and cur.snapshot_id not in referenced:
            referenced.add(cur.snapshot_id)
            if n < keep_n or oldest is None or cur.timestamp_ms >= oldest:
                retained.add(cur.snapshot_id)
            n += 1
            cur = by_id.get(cur.parent_snapshot_id) \
                if cur.parent_snapshot_id is not None else None
    oldest_any = now_ms - age_ms if age_ms is not None else None
    for s in meta.snapshots:
        if s.snapshot_id not in referenced and (oldest_any is None
                                                or s.timestamp_ms >= oldest_any):
            retained.add(s.snapshot_id)
    return {s.snapshot_id for s in meta.snapshots} - retained, removed_refs


def expire_branch(catalog: Catalog, branch: str, policy: Policy, now_ms: int,
                  dry_run: bool) -> Expired:
    """One commit on ``branch`` expiring its tables' snapshots (none when
    nothing expires, or in a dry run)."""
    keep_s = policy.keep_s
    default_age = int(keep_s * 1000) if keep_s is not None else None
    out = Expired(branch)
    keys = _tables(catalog, branch)
    if not keys:
        return out

    def plan_commit(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[Expired]:
        out.snapshots.clear()
        out.refs.clear()
        ops: list[Operation] = []
        written: list[str] = []
        for key, c in found.items():
            if not isinstance(c, IcebergTable):
                continue
            try:
                meta = catalog.files.table(c.metadata_location)[0]
            except SapwoodError:
                # Damaged or unreadable metadata: its snapshots stay, and the
                # files step reports it (one table never stops the rest).
                continue
            snaps, refs = plan(meta, default_age, now_ms)
            if not snaps and not refs:
                continue
            name = dotted(key)
            if snaps:
                out.snapshots[name] = len(snaps)
            if refs:
                out.refs[name] = refs
            if dry_run:
                continue
            updates: list[TableUpdate] = [RemoveSnapshotRefUpdate(ref_name=r) for r in refs]
            if snaps:
                updates.append(RemoveSnapshotsUpdate(snapshot_ids=sorted(snaps)))
            new = update_table_metadata(meta, tuple(updates),
                                        metadata_location=c.metadata_location)
            loc = catalog.metadata_file(new.location, new.properties, c.metadata_location)
            catalog.files.write_table(new, loc, catalog.files.table(c.metadata_location)[1])
            written.append(loc)
            ops.append(Put(key, table_content(new, loc, c.id), expected=c))
        message = ("expire snapshots: " + ", ".join(
            f"{t} ({n})" for t, n in sorted(out.snapshots.items()))) if out.snapshots else \
            "expire table refs: " + ", ".join(sorted(out.refs))
        return Change(ops, message, out, written,
                      finish=lambda committed: _landed(out, committed))

    return catalog.write_at(parse_ref(branch), keys, Who(GC_AUTHOR, author=GC_AUTHOR),
                            plan_commit)


def _landed(out: Expired, committed: CommitResult) -> Expired:
    out.commit = committed.hash
    return out


def _tables(catalog: Catalog, branch: str) -> list[ContentKey]:
    keys: list[ContentKey] = []
    token = None
    while True:
        page = catalog.store.entries(branch, types=[ContentType.ICEBERG_TABLE],
                                     page_token=token, page_size=_PAGE)
        keys += [e.key for e in page.items]
        token = page.next_token
        if not token:
            return keys


def _int(text: str | None, default: int | None) -> int | None:
    """A non-negative whole-number property, else ``default`` (an engine
    would refuse the table's expiry on a bad value; gc keeps its snapshots)."""
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        return None
    return value if 0 <= value <= INT64_MAX else None
