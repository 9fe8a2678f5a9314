"""Undo with an audit trail: make keys as they were at another commit, in
one new commit on top of the branch (nothing earlier is rewritten).

Per kind of object, "as it was" means:

* a view gets a new version on top of its current one whose SQL, schema,
  default catalog and namespace and representations are the source
  version's; its summary names where it came from (``sapwood.restored-from-
  commit``, ``-version``, ``-ref``), so the audit shows it;
* a table gets a new metadata file whose current snapshot, schema, partition
  spec and sort order are the source's; the snapshots in between stay for
  time travel;
* a materialized view, a namespace: the source's value (a materialized view
  points at the source's metadata file, so it is fresh exactly when its
  base tables are as they were at the source);
* a key absent at the source is deleted; a key dropped since comes back
  under its old content id, so its history reads across the drop.

The plan runs inside one write (catalog.kernel): strict-mode invalidation
and view cycles are checked as for any commit, and a dry run plans the same
without writing a file or a commit. Reverting commits (catalog.undo.revert) is a
restore of the keys they changed to before them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.update import (
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSnapshotUpdate,
    AddSortOrderUpdate,
    RemoveSnapshotRefUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
    SetSnapshotRefUpdate,
    TableUpdate,
)

from catalog.iceberg_v3.lineage import bring_back
from catalog.iceberg_v3.metadata import V3
from catalog.kernel import Catalog, Change, Who
from catalog.metadata.table_updates import apply
from catalog.tables import table_content
from catalog.views.analysis import analyse_version, refuse_cycle, view_relation
from catalog.views.definers import vouch, writer
from catalog.views.invalidation import Require, check_changes, check_removals
from catalog.views.security import recorded
from catalog.views.views import view_content
from core.commits import Delete, Operation, OpKind, Put, ResolvedRef
from core.content import Content, IcebergTable, IcebergView, MaterializedView, Namespace
from core.errors import ContentNotFoundError, bad_request, commit_failed
from core.keys import ContentKey
from core.refs import RefSpec
from core.sql.model import TABLE, Relation
from core.views import (
    LAST_ADDED,
    AddSchema,
    AddViewVersion,
    SetCurrentViewVersion,
    apply_view_updates,
    current_version,
)

# What a restored view version's summary records of where it came from.
FROM_REF = "sapwood.restored-from-ref"
FROM_COMMIT = "sapwood.restored-from-commit"
FROM_VERSION = "sapwood.restored-from-version"
# The table's own ref to its current snapshot (Iceberg's "main"), not a branch of the catalog.
CURRENT_SNAPSHOT_REF = MAIN_BRANCH


@dataclass(frozen=True, slots=True)
class Source:
    """Where one key is restored from: a commit (and how the caller named it)."""

    label: str
    hash: str


@dataclass(frozen=True, slots=True)
class RestoredKey:
    """What the restore does to one key."""

    key: ContentKey
    action: str  # restored | revived | deleted | unchanged
    source: Source
    content_type: str | None
    # For a view: the source's version and the new one; for a table: the
    # source's snapshot.
    detail: dict[str, Any] = field(default_factory=dict)


# A key's plan: its operation, what it says, the files written, and what
# the object becomes for the views that read it.
_Planned = tuple[Operation | None, "RestoredKey", list[str], "Relation | None"]


@dataclass(frozen=True, slots=True)
class RestoreResult:
    hash: str | None  # the new commit (None: a dry run, or nothing to change)
    keys: list[RestoredKey]
    dry_run: bool
    message: str


class Restorer:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.store = catalog.store
        self.files = catalog.files

    def restore(self, branch: RefSpec, source: str, keys: Sequence[ContentKey], who: Who,
                dry_run: bool = False, expected_hash: str | None = None,
                require: Require = None, visible: Visible = None) -> RestoreResult:
        """Make ``keys`` on ``branch`` as they were at ``source`` (any ref
        spec: a name, ``ref@hash``, ``ref*instant``). A key that exists at
        neither side is a mistake, not a no-op: 404 naming it (a key the
        caller may not read on the branch, ``visible``, counts as absent
        there, so that the answer says nothing of it)."""
        if not keys:
            raise bad_request("A restore names at least one key")
        if len(set(keys)) != len(keys):
            raise bad_request("A restore names each key once")
        src = Source(source, self.store.resolve(source).hash)
        names = ", ".join(".".join(k.elements) for k in keys)
        message = f"restore {names} from {source} ({src.hash[:12]})"
        return self.apply(branch, {k: src for k in keys}, who, dry_run, message,
                          {"sapwood.restore.source": source,
                           "sapwood.restore.commit": src.hash},
                          expected_hash=expected_hash, require=require,
                          missing=_missing(source, branch, visible))

    def apply(self, branch: RefSpec, sources: dict[ContentKey, Source], who: Who,
              dry_run: bool, message: str, properties: dict[str, str],
              expected: dict[ContentKey, Content | None] | None = None,
              expected_hash: str | None = None, require: Require = None,
              missing: Missing | None = None) -> RestoreResult:
        """One commit making each key as at its source; with ``expected``,
        the value each key must hold at the head, and with ``expected_hash``
        the keys must not have changed since that commit (else a conflict
        names them). ``require`` checks the caller may write each key;
        ``missing`` refuses keys absent at both their source and the head."""
        if require is not None:
            for k in sources:
                require(k)
        wanted: dict[ContentKey, Content | None] = {}
        for src in {s.hash for s in sources.values()}:
            keys = [k for k, s in sources.items() if s.hash == src]
            found = self.store.contents(f"@{src}", keys)
            wanted.update({k: found.get(k) for k in keys})
        parents = sorted({k.parent for k in sources if len(k.elements) > 1} - set(sources),
                         key=lambda k: k.elements)

        def plan(head: ResolvedRef, found: dict[ContentKey, Content]) -> Change[RestoreResult]:
            if missing is not None:
                missing(head, [k for k in sources if wanted[k] is None], found)
            if expected is not None:
                moved = [k for k, v in expected.items() if _hash(found.get(k)) != _hash(v)]
                if moved:
                    raise commit_failed(
                        "Cannot revert: changed again since by later commits: "
                        + ", ".join(".".join(k.elements) for k in moved))
            if expected_hash is not None and expected_hash != head.hash:
                then = self.store.contents(f"@{expected_hash}", list(sources))
                moved = [k for k in sources if _hash(then.get(k)) != _hash(found.get(k))]
                if moved:
                    raise commit_failed(
                        f"Cannot restore: changed since {expected_hash[:12]}: "
                        + ", ".join(".".join(k.elements) for k in moved))
            ops: list[Operation] = []
            files: list[str] = []
            done: list[RestoredKey] = []
            relations: dict[ContentKey, Relation] = {}
            try:
                for key, src in sources.items():
                    op, out, written, rel = self._plan_key(
                        branch, head, key, src, found.get(key), wanted[key], dry_run,
                        set(sources), who)
                    done.append(out)
                    files += written
                    if op is not None:
                        ops.append(op)
                    if rel is not None:
                        relations[key] = rel
                self._check_views(head, ops, relations)
            except BaseException:
                for f in files:
                    self.files.discard(f)
                raise
            result = RestoreResult(None, done, dry_run, message)
            if dry_run:
                return Change([], message, result)
            return Change(ops, message, result, files, properties=properties,
                          finish=lambda c: RestoreResult(c.hash, done, False, message))

        return self.catalog.write_at(branch, [*sources, *parents], who, plan)

    # -- one key -----------------------------------------------------------------------
    def _plan_key(self, branch: RefSpec, head: ResolvedRef, key: ContentKey, src: Source,
                  cur: Content | None, old: Content | None, dry_run: bool,
                  restoring: set[ContentKey], who: Who) -> _Planned:
        if old is None:
            if cur is None:
                return None, RestoredKey(key, "unchanged", src, None), [], None
            return Delete(key, expected=cur), RestoredKey(key, "deleted", src, cur.type), [], None
        if cur is not None and cur.id != old.id:
            raise commit_failed(
                f"Cannot restore {'.'.join(key.elements)}: it holds another object now "
                f"(content {cur.id}, not {old.id}); drop or rename it first")
        if cur is not None and _hash(cur) == _hash(old):
            return None, RestoredKey(key, "unchanged", src, cur.type), [], None
        action = "restored" if cur is not None else "revived"
        base = cur if cur is not None else self._last_before_drop(head, key, old, restoring)
        if isinstance(old, IcebergView) and isinstance(base, IcebergView):
            return self._view(branch, key, src, base, old, cur, action, dry_run, who)
        if isinstance(old, IcebergTable) and isinstance(base, IcebergTable):
            return self._table(key, src, base, old, cur, action, dry_run)
        if isinstance(old, Namespace | MaterializedView | IcebergView | IcebergTable):
            # The kind changed in between, or a materialized view or namespace:
            # the source's value itself, under its own id.
            return (Put(key, old, expected=cur, revive=cur is None),
                    RestoredKey(key, action, src, old.type), [], None)
        raise bad_request(f"Cannot restore {'.'.join(key.elements)}: unknown content")

    def _last_before_drop(self, head: ResolvedRef, key: ContentKey, old: Content,
                          restoring: set[ContentKey]) -> Content:
        """The newest value the content had on this branch (before its drop),
        so that what happened after the source stays in its history; the
        source's own value when the branch never had it. Refused (409) when
        the content still lives under another name (renamed since) that this
        restore leaves alone: two keys would hold one object."""
        if old.id is None:
            return old
        for commit in self.store.lineage(f"@{head.hash}", old.id):
            op = next((o for o in commit.operations if o.kind is OpKind.PUT
                       and o.entry is not None and o.entry.content_id == old.id), None)
            if op is None:
                continue
            if op.key != key and op.key not in restoring:
                now = self.store.contents(f"@{head.hash}", [op.key]).get(op.key)
                if now is not None and now.id == old.id:
                    raise commit_failed(
                        f"Cannot restore {'.'.join(key.elements)}: its object lives at "
                        f"{'.'.join(op.key.elements)} now (renamed since); restore both "
                        "keys together, or rename it back")
            value = self.store.contents(f"@{commit.hash}", [op.key]).get(op.key)
            if value is not None and value.type == old.type:
                return value
        return old

    def _view(self, branch: RefSpec, key: ContentKey, src: Source, base: IcebergView,
              old: IcebergView, cur: Content | None, action: str, dry_run: bool,
              who: Who) -> _Planned:
        before = self.files.view(base.metadata_location)[0]
        then = self.files.view(old.metadata_location)[0]
        version = current_version(then)
        schema = next(s for s in then.schemas if s.schema_id == version.schema_id)
        summary = {**{k: v for k, v in version.summary.items()
                      if not k.startswith("sapwood.restored-from-")},
                   FROM_REF: src.label, FROM_COMMIT: src.hash,
                   FROM_VERSION: str(version.version_id)}
        added = version.model_copy(update={"version_id": LAST_ADDED, "schema_id": LAST_ADDED,
                                           "summary": summary,
                                           "timestamp_ms": self._now_ms()})
        meta = apply_view_updates(before, [
            AddSchema(schema_=schema), AddViewVersion(view_version=added),
            SetCurrentViewVersion(view_version_id=LAST_ADDED)], self._now_ms(),
            keep_dialects=False)
        # A new current version: a definer view's restorer becomes its definer.
        props, vouches = recorded(meta.properties, before.properties, True, writer(who))
        meta = meta.model_copy(update={"properties": props})
        analysis = analyse_version(self.catalog, branch, meta)
        refuse_cycle(self.catalog, branch, key, analysis[0])
        if vouches:
            vouch(self.catalog, branch, key, analysis[0], who)
        loc = self.catalog.metadata_file(meta.location, meta.properties, base.metadata_location)
        new = view_content(meta, loc, old.id, analysis)
        detail = {"sourceVersionId": version.version_id, "versionId": meta.current_version_id}
        written = []
        if not dry_run:
            self.files.write_view(meta, loc)
            written.append(loc)
        return (Put(key, new, expected=cur, revive=cur is None),
                RestoredKey(key, action, src, new.type, detail), written,
                view_relation(key.elements, new, meta))

    def _table(self, key: ContentKey, src: Source, base: IcebergTable, old: IcebergTable,
               cur: Content | None, action: str, dry_run: bool) -> _Planned:
        before = self.files.table(base.metadata_location)[0]
        then = self.files.table(old.metadata_location)[0]
        detail = {"sourceSnapshotId": old.snapshot_id if old.snapshot_id >= 0 else None}
        if before.table_uuid != then.table_uuid:
            # Another table under the same content id cannot be; its own file then.
            return (Put(key, old, expected=cur, revive=cur is None),
                    RestoredKey(key, action, src, old.type, detail), [], None)
        updates = _table_updates(before, then)
        if before.format_version >= V3:
            # A snapshot expired since comes back without renumbering rows.
            for u in [u for u in updates if isinstance(u, AddSnapshotUpdate)]:
                before = bring_back(before, u.snapshot)
                updates.remove(u)
        # Ids as Iceberg assigns them: an old schema whose id another holds
        # now comes back under a new one.
        meta = apply(before, updates, base.metadata_location)
        loc = self.catalog.metadata_file(meta.location, meta.properties, base.metadata_location)
        new = table_content(meta, loc, old.id)
        written = []
        if not dry_run:
            self.files.write_table(meta, loc, self.files.table(base.metadata_location)[1])
            written.append(loc)
        schema = meta.schema()
        rel = Relation(key.elements, old.id or "", TABLE,
                       tuple((f.name, str(f.field_type)) for f in schema.fields),
                       ids={f.name: f.field_id for f in schema.fields})
        return (Put(key, new, expected=cur, revive=cur is None),
                RestoredKey(key, action, src, new.type, detail), written, rel)

    def _check_views(self, head: ResolvedRef, ops: Sequence[Operation],
                     relations: dict[ContentKey, Relation]) -> None:
        """Strict-mode invalidation, as for any commit: what the views that
        read a restored key would see; a deleted key as a drop."""
        changed: dict[ContentKey, tuple[Content, Relation | None]] = {}
        for op in ops:
            if isinstance(op, Put) and isinstance(op.content, IcebergView | IcebergTable
                                                  | MaterializedView):
                changed[op.key] = (op.content, relations.get(op.key))
        if changed:
            check_changes(self.catalog, head, "the restored", changed)
        gone = [op.key for op in ops if isinstance(op, Delete)]
        if gone:
            check_removals(self.catalog, head, gone, {op.key for op in ops})

    def _now_ms(self) -> int:
        return self.store.clock() // 1000


def _table_updates(now: TableMetadata, then: TableMetadata) -> list[TableUpdate]:
    """PyIceberg updates that make ``now``'s current snapshot, schema, spec
    and sort order ``then``'s, keeping every snapshot ``now`` has."""
    out: list[TableUpdate] = []
    schema = then.schema()
    if any(s.schema_id == schema.schema_id and s == schema for s in now.schemas):
        out.append(SetCurrentSchemaUpdate(schema_id=schema.schema_id))
    else:
        out += [AddSchemaUpdate(schema_=schema), SetCurrentSchemaUpdate(schema_id=-1)]
    spec = then.spec()
    if any(s.spec_id == spec.spec_id and s == spec for s in now.partition_specs):
        out.append(SetDefaultSpecUpdate(spec_id=spec.spec_id))
    else:
        out += [AddPartitionSpecUpdate(spec=spec), SetDefaultSpecUpdate(spec_id=-1)]
    order = then.sort_order_by_id(then.default_sort_order_id)
    if order is not None and any(o.order_id == order.order_id and o == order
                                 for o in now.sort_orders):
        out.append(SetDefaultSortOrderUpdate(sort_order_id=order.order_id))
    elif order is not None:
        out += [AddSortOrderUpdate(sort_order=order), SetDefaultSortOrderUpdate(sort_order_id=-1)]
    snap = then.current_snapshot()
    if snap is None:
        if now.current_snapshot_id is not None:
            out.append(RemoveSnapshotRefUpdate(ref_name=CURRENT_SNAPSHOT_REF))
        return out
    if now.snapshot_by_id(snap.snapshot_id) is None:  # expired since: brought back
        out.append(AddSnapshotUpdate(snapshot=snap))
    out.append(SetSnapshotRefUpdate(ref_name=CURRENT_SNAPSHOT_REF, type="branch",
                                    snapshot_id=snap.snapshot_id, max_ref_age_ms=None,
                                    max_snapshot_age_ms=None, min_snapshots_to_keep=None))
    return out


def _hash(c: Content | None) -> str | None:
    return c.value_hash() if c is not None else None


# Whether the caller may read a key on the branch (None: every key).
Visible = Callable[[ContentKey], bool] | None
# Given the head, the keys absent at their source and what the head holds:
# raises when one is absent at the head too.
Missing = Callable[[ResolvedRef, list[ContentKey], dict[ContentKey, Content]], None]


def _missing(source: str, branch: RefSpec, visible: Visible) -> Missing:
    def check(head: ResolvedRef, absent: list[ContentKey],
              found: dict[ContentKey, Content]) -> None:
        gone = [k for k in absent
                if k not in found or (visible is not None and not visible(k))]
        if gone:
            names = ", ".join(f"'{k}'" for k in gone)
            raise ContentNotFoundError(
                f"{'key' if len(gone) == 1 else 'keys'} {names} "
                f"{'exists' if len(gone) == 1 else 'exist'} neither at '{source}' nor on "
                f"'{branch}': nothing to restore")

    return check
