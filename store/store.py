"""The store's front door: one object that the catalog layer, the CLI and
the HTTP layer hold."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from core.commits import (
    DEFAULT_BRANCH,
    Combiner,
    CommitMeta,
    CommitResult,
    MergeBehavior,
    MergeConflictError,
    MergeResult,
    Operation,
    Page,
    Put,
    Reference,
    ReflogEntry,
    RefType,
    Resolution,
    ResolvedRef,
)
from core.conflicts import CommitConflictError, Conflict, ConflictType
from core.content import Content
from core.keys import ContentKey
from core.refs import RefSpec, branch_to_write, normalize_hash, parse_ref
from store.auth import AuthStore
from store.changes import ChangeIndex
from store.committing import CommitPlanner, validate_operations
from store.db import Database
from store.edges import ViewEdges, edges_of
from store.events import EventLog
from store.history import History
from store.idempotency import IdempotencyKeys, Once
from store.index import KeyIndex
from store.locations import Claim, LocationIndex
from store.merging import MergePlan, MergePlanner
from store.migrate import bootstrap, schema_problem, upgrade
from store.objects import ObjectReader
from store.reads import Reads
from store.refs import Refs
from store.retention import Retention
from store.stats import StoreStats
from store.webhooks import Webhooks
from store.writes import BranchWriter, WriteSet


def _now_us() -> int:
    return time.time_ns() // 1000


class Store(Reads):
    def __init__(self, url: str, *, clock: Callable[[], int] = _now_us,
                 node_cache_size: int = 20_000, cache_bytes: int | None = None) -> None:
        """``cache_bytes``: what the object caches may hold (a server's share
        of SAPWOOD_CACHE_BYTES); without it, only their entry counts bound them."""
        db = Database(url)
        upgrade(db)
        bootstrap(db, clock())
        reader = ObjectReader(db, node_cache_size=node_cache_size, max_bytes=cache_bytes)
        index = KeyIndex(reader)
        keys = IdempotencyKeys(db)
        self.events = EventLog(db)
        self.webhooks = Webhooks(db)
        refs = Refs(db, clock, keys, self.events)
        history = History(db, reader)
        changes = ChangeIndex(db)
        super().__init__(db, reader, index, refs, history, changes,
                         Retention(db, changes, clock))
        self.clock = clock
        self.stats = StoreStats()
        self.locations = LocationIndex(db, self.live_anywhere)
        self.keys = keys
        self.writer = BranchWriter(db, refs, reader, self.changes, self.stats, self.locations,
                                   keys, self.events)
        self.commits = CommitPlanner(reader, self.states, history)
        self.merges = MergePlanner(reader, self.states, history)
        self.auth = AuthStore(db, clock)
        self.edges = ViewEdges(db)

    def close(self) -> None:
        self.db.dispose()

    def schema_problem(self) -> str | None:
        """Why the database is not ready for this version (None: it is)."""
        return schema_problem(self.db)

    # -- references ------------------------------------------------------------------
    def list_references(self, page_token: str | None = None, page_size: int | None = None,
                        prefix: str | None = None,
                        visible: Callable[[str], bool] | None = None) -> Page[Reference]:
        return self.refs.page(page_token, page_size, prefix, visible)

    def get_reference(self, name: str) -> Reference:
        return self.refs.get(name)

    # ``once``: the request's Idempotency-Key, recorded with the change
    # (store.idempotency); its answer is made from the Reference.
    def create_reference(self, name: str, ref_type: RefType = RefType.BRANCH,
                         source: str = DEFAULT_BRANCH, principal: str | None = None,
                         once: Once | None = None) -> Reference:
        return self.refs.create(name, ref_type, self.resolve(source).hash, principal,
                                once=once)

    def assign_reference(self, name: str, expected_hash: str, target: str,
                         principal: str | None = None, ref_type: RefType | None = None,
                         once: Once | None = None) -> Reference:
        expected = self.full_hash(normalize_hash(expected_hash))
        self.writer.forget(name)
        return self.refs.assign(name, expected, self.resolve(target).hash, principal, ref_type,
                                once)

    def delete_reference(self, name: str, expected_hash: str, principal: str | None = None,
                         ref_type: RefType | None = None, once: Once | None = None,
                         ) -> Reference:
        expected = self.full_hash(normalize_hash(expected_hash))
        self.writer.forget(name)
        return self.refs.delete(name, expected, principal, ref_type, once)

    def reflog(self, name: str, limit: int = 100) -> list[ReflogEntry]:
        return self.refs.reflog(name, limit)

    # -- writes ------------------------------------------------------------------------
    def commit(self, branch: str | RefSpec, operations: Sequence[Operation],
               meta: CommitMeta | None = None, expected_hash: str | None = None,
               principal: str | None = None, claims: Sequence[Claim] = (),
               once: Once | None = None) -> CommitResult:
        """``claims``: locations the put objects take (store.locations); a
        claim that overlaps another object's is refused (LocationTakenError).
        ``once``: the request's Idempotency-Key, recorded in the commit's
        transaction with the answer it makes of the CommitResult."""
        name = _branch_name(branch)
        validate_operations(operations)
        expected = self.full_hash(normalize_hash(expected_hash)) if expected_hash else None
        meta = meta or CommitMeta()
        edges = edges_of(operations)
        ids = {op.key: op.content.id for op in operations if isinstance(op, Put)}

        def plan(head: Reference) -> WriteSet[CommitResult]:
            ws = self.commits.plan(head, operations, meta, expected, principal, self.clock())
            ws.edges = edges  # what the views put here read, written with the commit
            ws.once = once
            if claims and ws.commits:
                assigned = {**ids, **ws.result.assigned_ids}
                ws.claims = [(c.key, c.path, cid, c.exclusive) for c in claims
                             if (cid := assigned.get(c.key))]
            return ws

        try:
            return self.writer.run(name, plan, principal)
        except CommitConflictError:
            self.stats.add("conflicts")
            raise

    def live_anywhere(self, content_id: str) -> bool:
        """Whether the object is at some reference's head: per reference, the
        newest commit that put it (the change index) names its key there."""
        token = None
        while True:
            page = self.refs.page(token, 1000)
            for ref in page.items:
                commits = self.lineage(f"@{ref.hash}", content_id)
                if not commits:
                    continue
                key = next((op.key for op in commits[0].operations
                            if op.entry is not None and op.entry.content_id == content_id),
                           None)
                if key is None:
                    continue
                found = self.lookup(f"@{ref.hash}", [key])[1].get(key)
                if found is not None and found.id == content_id:
                    return True
            token = page.next_token
            if not token:
                return False

    def dependents(self, spec: str | RefSpec, key: ContentKey,
                   ) -> tuple[ResolvedRef, dict[ContentKey, Content]]:
        """The views that read ``key`` at the commit ``spec`` names."""
        resolved = self.resolve(spec)
        at = f"@{resolved.hash}"
        return resolved, self.edges.dependents(key, lambda keys: self.lookup(at, keys)[1])

    def readers(self, spec: str | RefSpec, keys: Sequence[ContentKey],
                ) -> dict[ContentKey, Content]:
        """The views that read any of ``keys`` at the commit ``spec`` names
        (``dependents`` of many keys at once)."""
        at = f"@{self.resolve(spec).hash}"
        return self.edges.readers(keys, lambda wanted: self.lookup(at, wanted)[1])

    def merge(self, source: str | RefSpec, into: str | RefSpec, *, expected_hash: str | None = None,
              default_mode: MergeBehavior = MergeBehavior.NORMAL,
              key_modes: dict[ContentKey, MergeBehavior] | None = None,
              dry_run: bool = False, meta: CommitMeta | None = None,
              principal: str | None = None, raise_on_conflict: bool = True,
              resolutions: dict[ContentKey, Resolution] | None = None,
              once: Once | None = None, plan: MergePlan | None = None) -> MergeResult:
        """``resolutions``: combined values for keys changed on both sides
        (content-aware merges, catalog.merge.content); each applies only
        while the target holds the value it was worked out from. ``plan``:
        shared by a merge's dry run and its landing (store.merging.MergePlan):
        the source is resolved once, and the landing takes what the dry run
        worked out while the target has not moved."""
        name = _branch_name(into)
        if plan is None or plan.source_hash is None:
            source_hash = self.resolve(source).hash
            if plan is not None:
                plan.source_hash = source_hash
        else:
            source_hash = plan.source_hash
        modes = dict(key_modes or {})
        self._check_expected(name, expected_hash)
        # Combined view values are new values: index what they read.
        edges = edges_of([Put(k, r.content) for k, r in (resolutions or {}).items()])

        def planned(head: Reference) -> WriteSet[MergeResult]:
            ws = self.merges.plan_merge(head, source_hash, str(source), default_mode, modes,
                                        dry_run, meta, principal, self.clock(),
                                        raise_on_conflict, resolutions, plan)
            if ws.commits:
                ws.edges = edges
            ws.once = once
            return ws

        return self._counted(lambda: self.writer.run(name, planned, principal))

    def transplant(self, hashes: Sequence[str], onto: str | RefSpec, *,
                   expected_hash: str | None = None,
                   default_mode: MergeBehavior = MergeBehavior.NORMAL,
                   key_modes: dict[ContentKey, MergeBehavior] | None = None,
                   dry_run: bool = False, principal: str | None = None,
                   raise_on_conflict: bool = True, combiner: Combiner | None = None,
                   once: Once | None = None) -> MergeResult:
        """``combiner``: works out combined values for keys a transplanted
        commit and the target both changed (content-aware, as for merges)."""
        name = _branch_name(onto)
        full = [self.full_hash(normalize_hash(h)) for h in hashes]
        modes = dict(key_modes or {})
        self._check_expected(name, expected_hash)

        def plan(head: Reference) -> WriteSet[MergeResult]:
            ws = self.merges.plan_transplant(head, full, default_mode, modes, dry_run, principal,
                                             self.clock(), raise_on_conflict, combiner)
            ws.once = once
            return ws

        return self._counted(lambda: self.writer.run(name, plan, principal))

    def _counted(self, run: Callable[[], MergeResult]) -> MergeResult:
        """Merges and transplants by how they ended, for /metrics."""
        try:
            result = run()
        except (MergeConflictError, CommitConflictError):
            self.stats.merged("conflict")
            raise
        self.stats.merged("dry_run" if result.dry_run else
                          "applied" if result.applied else "conflict")
        return result

    def _check_expected(self, branch: str, expected_hash: str | None) -> None:
        """A merge's expected target hash must be the head or one of its ancestors."""
        if expected_hash is None:
            return
        expected = self.full_hash(normalize_hash(expected_hash))
        head = self.refs.get(branch).hash
        if not self.history.is_ancestor(expected, head):
            raise CommitConflictError([Conflict(
                ConflictType.UNEXPECTED_HASH, None,
                f"expected hash {expected} is not in the history of branch '{branch}'")])


def _branch_name(ref: str | RefSpec) -> str:
    return branch_to_write(parse_ref(ref) if isinstance(ref, str) else ref)

