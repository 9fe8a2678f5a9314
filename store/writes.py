"""Turning a planned change into rows, and landing it on a branch.

A plan is computed against a head, then written in one transaction: the new
commit rows (each carrying its pack of new index nodes and content values),
the compare-and-swap of the branch head, and the reflog entry. The first try
is optimistic: it plans against the head this process last saw, outside any
lock. If the branch moved, later tries re-plan inside the write transaction
with the ref row locked, so a busy branch costs one extra round rather than a
storm of retries — and nothing is ever half-written: a failed swap rolls the
whole transaction back.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from core.commits import (
    CommitMeta,
    IndexEntry,
    OpKind,
    Reference,
    RefType,
)
from core.errors import (
    RetryLimitError,
    SapwoodError,
)
from core.keys import ContentKey
from core.missing import no_such_reference
from core.refs import branch_to_write, parse_ref
from store.changes import Ancestry, ChangeIndex
from store.commit_records import CommitRecord
from store.db import Database
from store.events import EventLog
from store.faults import ConnectionLostError
from store.idempotency import Answer, IdempotencyKeys, Once
from store.locations import LocationIndex
from store.nodes import Node, stamp
from store.objects import ObjectReader, encode_pack, loc_of, plan_packs
from store.refs import Refs
from store.state import IndexState
from store.stats import StoreStats

R = TypeVar("R")
LOCKED_ATTEMPTS = 3


@dataclass
class NewCommit:
    record: CommitRecord
    row: tuple[object, ...]  # parameters of the commits INSERT
    overflow: list[tuple[str, bytes]]  # further packs (loc, data), for bulk commits
    nodes: list[Node]


@dataclass
class WriteSet(Generic[R]):
    result: R
    commits: list[NewCommit] = field(default_factory=list)
    reason: str = "commit"
    # Rows of the view-edge index (store.edges) that land with the commit.
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    # Per merge commit, the content ids its source side brings in (the
    # change index's M rows, store.changes).
    carried: dict[str, set[str]] = field(default_factory=dict)
    # Locations the commit's objects take: (key, path, content id,
    # exclusive), checked and recorded in its transaction (store.locations).
    claims: list[tuple[ContentKey, str, str, bool]] = field(default_factory=list)
    # The request's Idempotency-Key: recorded with its answer in the
    # commit's transaction (store.idempotency).
    once: Once | None = None
    answered: Answer | None = None

    @property
    def new_head(self) -> str | None:
        return self.commits[-1].record.hash if self.commits else None


def commit_digest(parents: tuple[str, ...], root: str | None, depth: int, created_us: int,
                  author: str | None, committer: str | None, message: str,
                  properties: list[tuple[str, str]],
                  operations: list[tuple[str, str | None]]) -> str:
    """A commit's hash: its parents, index root, metadata and the identities of
    its operations (key, entry identity or None for a delete), keys sorted."""
    body = [parents, root, depth, created_us, author, committer, message, properties,
            operations]
    return hashlib.sha256(_json(body).encode()).hexdigest()


def seal(parents: list[CommitRecord], state: IndexState, depth: int, new_nodes: list[Node],
         contents: dict[str, bytes], meta: CommitMeta, changes: dict[str, IndexEntry | None],
         now_us: int, principal: str | None) -> NewCommit:
    """Build a commit on ``parents[0]`` and give its new objects their location.

    The commit hash covers identities only (root hash, value hashes), so it
    can be computed before the objects know which pack they live in. Its time
    never goes below its parent's. ``state`` must be a fresh value: the new
    entries in its delta are given their locations in place.
    """
    created = max(now_us, parents[0].created_us + 1)
    committer = meta.committer or principal
    author = meta.author or committer
    root = state.base
    if isinstance(root, Node):
        raise AssertionError("seal needs a finalized root")
    changed = sorted(changes.items())
    props = sorted(meta.properties.items())
    parent_hashes = tuple(p.hash for p in parents)
    digest = commit_digest(parent_hashes, root[0] if root else None, depth, created, author,
                           committer, meta.message, props,
                           [(k, e.identity if e else None) for k, e in changed])
    locs, packs = plan_packs(new_nodes, contents, loc_of(digest))
    if new_nodes:
        stamp(new_nodes, locs)
    if root is not None and root[1] is None:
        root = (root[0], locs[root[0]])
    ops: list[list[str | None]] = []
    delta = state.delta
    for k, e in changed:
        if e is None:
            ops.append([OpKind.DELETE.value, k])
            continue
        if e.loc is None:
            e = e.with_loc(locs[e.value_hash])
            if k in delta:
                delta[k] = e
        ops.append([OpKind.PUT.value, k, e.type.value, e.content_id, e.value_hash, e.loc])
    ops_raw = _json(ops)
    rec = CommitRecord(digest, parent_hashes, 1 + max(p.generation for p in parents), created,
                       author, committer, meta.message, dict(props), ops_raw, root, depth,
                       IndexState(root, delta))
    encoded = [(loc, encode_pack(loc, nodes, {h: contents[h] for h in hs}))
               for loc, nodes, hs in packs]
    row = (digest, parent_hashes[0], _json(parent_hashes[1:]) if len(parents) > 1 else None,
           rec.generation, created, author, committer, meta.message,
           _json(dict(props)) if props else "{}", ops_raw,
           root[0] if root else None, root[1] if root else None, depth,
           encoded[0][1] if encoded else None)
    return NewCommit(rec, row, encoded[1:], new_nodes)


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _json(value: object) -> str:
    return _ENCODER.encode(value)


class _Moved(Exception):
    """The branch head changed between planning and the swap."""


class BranchWriter:
    def __init__(self, db: Database, refs: Refs, reader: ObjectReader,
                 changes: ChangeIndex, stats: StoreStats | None = None,
                 locations: LocationIndex | None = None,
                 keys: IdempotencyKeys | None = None, events: EventLog | None = None) -> None:
        self.stats = stats or StoreStats()
        self.keys = keys
        self.events = events
        self.locations = locations
        self.db = db
        self.refs = refs
        self.reader = reader
        self.changes = changes
        # The hot path runs prebuilt driver-level SQL: a commit costs about as
        # much as the raw insert-plus-conditional-update it boils down to.
        p = db.param
        cols = ("hash, parent, merge_parents, generation, created_us, author, committer, "
                "message, properties, operations, root, root_loc, depth, pack")
        self._sql_commit = (f"INSERT INTO commits ({cols}) VALUES ({', '.join([p] * 14)}) "
                            "ON CONFLICT (hash) DO NOTHING")
        # The head's depth moves with it (the cutoff index, store.cutoff_index).
        self._sql_cas = (f"UPDATE refs SET head = {p}, head_depth = {p} WHERE name = {p} "
                         f"AND head = {p} AND type = 'BRANCH'")
        self._sql_reflog = ("INSERT INTO reflog (ref, ref_type, old_hash, new_hash, at_us, "
                            f"principal, reason) VALUES ({', '.join([p] * 7)})")
        self._sql_pack = f"INSERT INTO packs (loc, data) VALUES ({p}, {p})"
        self._sql_edges = (f"INSERT INTO view_edges (base_key, view_key, location) "
                           f"VALUES ({p}, {p}, {p}) ON CONFLICT DO NOTHING")
        anc_cols = "hash, parent, depth, created_us, jump, jump_depth, jump_created_us"
        chg_cols = "term, generation, hash, depth, created_us, kind"
        self._sql_ancestry = (f"INSERT INTO ancestry ({anc_cols}) VALUES ({', '.join([p] * 7)}) "
                              "ON CONFLICT DO NOTHING")
        self._sql_changes = (f"INSERT INTO changes ({chg_cols}) VALUES ({', '.join([p] * 6)}) "
                             "ON CONFLICT DO NOTHING")
        self._sql_one: str | None = None
        self._sql_one_spilled: str | None = None
        if db.dialect == "postgresql":
            moved = ("WITH moved AS (UPDATE refs SET head = %s, head_depth = %s WHERE name = %s "
                     "AND head = %s AND type = 'BRANCH' RETURNING name), "
                     f"stored AS (INSERT INTO commits ({cols}) SELECT {', '.join([p] * 14)} "
                     "FROM moved ON CONFLICT (hash) DO NOTHING) ")
            journal = ("INSERT INTO reflog (ref, ref_type, old_hash, new_hash, at_us, "
                       "principal, reason) SELECT name, 'BRANCH', %s, %s, %s, %s, %s FROM moved")
            # The change index lands in the same statement (store.changes).
            indexed = (f", anc AS (INSERT INTO ancestry ({anc_cols}) SELECT "
                       f"{', '.join(['%s'] * 7)} FROM moved ON CONFLICT DO NOTHING), "
                       f"chg AS (INSERT INTO changes ({chg_cols}) SELECT t.* FROM moved, "
                       "unnest(%s::text[], %s::bigint[], %s::varchar[], %s::bigint[], "
                       "%s::bigint[], %s::varchar[]) AS t(term, generation, hash, depth, "
                       "created_us, kind) ON CONFLICT DO NOTHING) ")
            # The change feed's event lands in the same statement (store.events).
            if events is not None:
                indexed += (
                    ", ev AS (INSERT INTO events (seq, txid, kind, ref, ref_type, old_hash, "
                    "new_hash, at_us, principal, data) SELECT NULL, "
                    "pg_current_xact_id()::text::bigint, %s, name, %s, %s, %s, %s, %s, %s "
                    "FROM moved) ")
            self._sql_one = moved + indexed + journal
            self._sql_one_spilled = (
                moved + ", spilled AS (INSERT INTO packs (loc, data) SELECT t.loc, t.data "
                # Binary parameters (%b): a text-format bytea array escapes every byte.
                "FROM moved, unnest(%b::varchar[], %b::bytea[]) AS t(loc, data)) "
                + indexed + journal)
        lock = " FOR UPDATE" if db.dialect == "postgresql" else ""
        self._sql_head = f"SELECT type, head FROM refs WHERE name = {p}{lock}"
        self._heads: dict[str, Reference] = {}
        self._heads_lock = threading.Lock()

    def run(self, branch: str, plan: Callable[[Reference], WriteSet[R]],
            principal: str | None) -> R:
        with self._heads_lock:
            guess = self._heads.get(branch)
        if guess is not None:
            # Planned against the head this process last wrote. Only a write is
            # trusted (the swap checks the head); a refusal or a no-op might be
            # an artefact of a stale guess, so those are planned again fresh.
            try:
                ws = plan(guess)
            except SapwoodError:
                ws = None
            if ws is not None and ws.new_head is not None:
                return self._first_write(guess, ws, plan, principal)
        head = self.refs.get(branch)
        _require_branch(head)
        ws = plan(head)
        if ws.new_head is None:
            return ws.result
        return self._first_write(head, ws, plan, principal)

    def _first_write(self, head: Reference, ws: WriteSet[R],
                     plan: Callable[[Reference], WriteSet[R]], principal: str | None) -> R:
        try:
            return self._write(head, ws, principal)
        except _Moved:
            return self._locked(head.name, plan, principal)
        except ConnectionLostError:
            # The connection broke (server restart, dropped idle connection)
            # and whether the write landed is unknown. Re-plan against the
            # head read afresh: a change that did land is refused by the
            # commit rules (its expected value has moved), never applied twice.
            self.forget(head.name)
            return self._locked(head.name, plan, principal)

    def _write(self, head: Reference, ws: WriteSet[R], principal: str | None) -> R:
        if self._sql_one is not None and len(ws.commits) == 1 and not ws.edges \
                and not ws.claims and ws.once is None:
            # PostgreSQL: swap, insert, index and journal in one atomic
            # statement, one round trip. Nothing is inserted unless the swap matched.
            c = ws.commits[0]
            anc, rows = self.changes.plan([c.record], ws.carried)
            swap = (c.record.hash, anc[0].depth, head.name, head.hash, *c.row)
            indexed = (*anc[0].row(), *([list(col) for col in zip(*rows, strict=True)]
                                        if rows else [[]] * 6))
            if self.events is not None:
                kind, _, ref_type, old, new, at_us, who, data = self.events.row(
                    ws.reason, head.name, RefType.BRANCH, head.hash, c.record.hash,
                    c.record.created_us, principal, [c.record])
                indexed = (*indexed, kind, ref_type, old, new, at_us, who, data)
            journal = (head.hash, c.record.hash, c.record.created_us, principal, ws.reason)
            if c.overflow:
                assert self._sql_one_spilled is not None  # set with _sql_one
                moved = self.db.run_statement(self._sql_one_spilled, (
                    *swap, [loc for loc, _ in c.overflow], [d for _, d in c.overflow],
                    *indexed, *journal))
            else:
                moved = self.db.run_statement(self._sql_one, (*swap, *indexed, *journal))
            if moved != 1:
                self.forget(head.name)
                raise _Moved
            return self._landed(head.name, ws, anc)
        with self.db.raw_write() as cur:
            anc = self._apply(cur, head, ws, principal)
        return self._landed(head.name, ws, anc)

    def _locked(self, branch: str, plan: Callable[[Reference], WriteSet[R]],
                principal: str | None) -> R:
        for _ in range(LOCKED_ATTEMPTS):
            self.stats.add("retries")  # planned again: the branch had moved
            try:
                with self.db.raw_write() as cur:
                    cur.execute(self._sql_head, (branch,))
                    row = cur.fetchone()
                    if row is None:
                        raise no_such_reference(branch)
                    head = Reference(branch, RefType(row[0]), row[1])
                    _require_branch(head)
                    ws = plan(head)
                    if ws.new_head is None:
                        return ws.result
                    anc = self._apply(cur, head, ws, principal)
                return self._landed(branch, ws, anc)
            except _Moved:
                time.sleep(0.001)
        raise RetryLimitError(
            f"branch '{branch}' kept moving; gave up after {LOCKED_ATTEMPTS + 1} attempts")

    def forget(self, branch: str) -> None:
        with self._heads_lock:
            self._heads.pop(branch, None)

    def _apply(self, cur: Any, head: Reference, ws: WriteSet[R],
               principal: str | None) -> list[Ancestry]:
        if ws.claims:
            assert self.locations is not None
            self.locations.claim(cur, ws.claims)  # refused: the transaction writes nothing
        anc, rows = self.changes.plan([c.record for c in ws.commits], ws.carried)
        if len(ws.commits) == 1:
            cur.execute(self._sql_commit, ws.commits[0].row)
        else:
            cur.executemany(self._sql_commit, [c.row for c in ws.commits])
        overflow = [p for c in ws.commits for p in c.overflow]
        if overflow:
            cur.executemany(self._sql_pack, overflow)
        if ws.edges:
            cur.executemany(self._sql_edges, ws.edges)
        if len(anc) == 1:
            cur.execute(self._sql_ancestry, anc[0].row())
        else:
            cur.executemany(self._sql_ancestry, [a.row() for a in anc])
        cur.executemany(self._sql_changes, rows)
        new = ws.new_head
        cur.execute(self._sql_cas, (new, anc[-1].depth, head.name, head.hash))
        if cur.rowcount != 1:
            self.forget(head.name)
            raise _Moved
        cur.execute(self._sql_reflog, (
            head.name, RefType.BRANCH.value, head.hash, new,
            ws.commits[-1].record.created_us, principal, ws.reason))
        if self.events is not None:  # the change feed's event (store.events)
            self.events.append_in(cur, ws.reason, head.name, RefType.BRANCH, head.hash, new,
                                  ws.commits[-1].record.created_us, principal,
                                  [c.record for c in ws.commits])
        if ws.once is not None:  # refused (KeyTakenError): the transaction writes nothing
            assert self.keys is not None
            ws.answered = self.keys.record_in(cur, ws.once, ws.result, new,
                                              ws.commits[-1].record.created_us)
        return anc

    def _landed(self, branch: str, ws: WriteSet[R], anc: list[Ancestry]) -> R:
        self.stats.add("commits", len(ws.commits))
        if ws.once is not None and ws.answered is not None:
            ws.once.landed(ws.answered)
        self.changes.remember(anc)
        for c in ws.commits:
            self.reader.remember_nodes(c.nodes)
            self.reader.remember_commit(c.record)
        with self._heads_lock:
            self._heads[branch] = Reference(branch, RefType.BRANCH, ws.new_head)  # type: ignore[arg-type]
        return ws.result


def _require_branch(ref: Reference) -> None:
    branch_to_write(parse_ref(ref.name), ref.type is not RefType.BRANCH)
