"""The change index: which commits changed a key, a content id, or were made
by an author — and where each commit sits on its first-parent chain — so
that audits and filtered logs cost what they find, not the history length.

Two insert-only tables, written in the commit's own transaction
(store.writes), filled for older catalogs by migration 0005:

* ``ancestry``: per commit, its first parent, its depth on the first-parent
  chain and one skip pointer (Myers' skew-binary scheme: the pointer of a
  commit is its parent, or its parent's pointer's pointer when the two
  previous jumps were of equal length). "Is C on the first-parent chain of
  H" is "is H's ancestor at C's depth C", and "the newest commit of H's
  chain at or before T" is a search down the same pointers (commit times
  never decrease along a chain): O(log n) look-ups, in one recursive query.
* ``changes``: posting lists by term (``k:<key>``, ``i:<content id>``,
  ``a:<author>``), each row one commit with its generation, depth and time.

Reachability (only commits reachable from the ref count). A first-parent
log needs only the chain test. The audit follows a content id over every
parent: a merge commit that brings in commits putting content X (commits
reachable from its source and not from its target, found when the merge is
written) gets an ``M`` row for X. The commits putting X that a head H
reaches are then found newest generation first from a set of tips, H to
begin with: a candidate is reached when it is on a tip's first-parent
chain, and a reached merge commit adds its other parents as tips. Any path
from H to such a commit leaves a first-parent chain only through a merge
that has X's ``M`` row (or that can be bypassed along its first parent),
which is why this finds exactly the commits a full walk would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import bindparam, select, text

from core.commits import NO_ANCESTOR, OpKind
from core.keys import ContentKey
from core.lru import LRU
from store.commit_records import CommitRecord
from store.db import Database
from store.history import only_in
from store.schema import ANCESTRY

_BATCH = 256


@dataclass(frozen=True, slots=True)
class Ancestry:
    hash: str
    parent: str | None
    depth: int
    created_us: int
    jump: str
    jump_depth: int
    jump_created_us: int

    def row(self) -> tuple[object, ...]:
        return (self.hash, self.parent, self.depth, self.created_us, self.jump,
                self.jump_depth, self.jump_created_us)


@dataclass(frozen=True, slots=True)
class Posting:
    generation: int
    hash: str
    depth: int
    created_us: int
    kind: str


def root_ancestry(created_us: int = 0) -> Ancestry:
    """The empty root commit's: depth 0, its jump itself."""
    return Ancestry(NO_ANCESTOR, None, 0, created_us, NO_ANCESTOR, 0, created_us)


def next_ancestry(hash_: str, created_us: int, parent: Ancestry, parent_jump: Ancestry,
                  ) -> Ancestry:
    """A commit's place on the chain, from its first parent's and that
    parent's jump target's."""
    if parent.depth - parent.jump_depth == parent.jump_depth - parent_jump.jump_depth:
        jump, depth, created = (parent_jump.jump, parent_jump.jump_depth,
                                parent_jump.jump_created_us)
    else:
        jump, depth, created = parent.hash, parent.depth, parent.created_us
    return Ancestry(hash_, parent.hash, parent.depth + 1, created_us, jump, depth, created)


# Built once: json.dumps with options builds an encoder per call (30 µs a commit).
_KEY_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def key_term(key: ContentKey) -> str:
    # JSON, not the internal form: PostgreSQL text cannot hold NUL separators.
    return "k:" + _KEY_JSON.encode(list(key.elements))


def id_term(content_id: str) -> str:
    return "i:" + content_id


def author_term(author: str) -> str:
    return "a:" + author


def change_rows(rec: CommitRecord, depth: int, carried: Iterable[str] = (),
                ) -> list[tuple[object, ...]]:
    """The posting rows of one commit; ``carried``: the content ids a merge
    brings in (put by commits reachable from its source only)."""
    terms: dict[str, str] = {}
    for op in rec.operations:
        terms[key_term(op.key)] = "P" if op.kind is OpKind.PUT else "D"
        if op.kind is OpKind.PUT and op.entry is not None:
            terms[id_term(op.entry.content_id)] = "P"
    for cid in carried:
        terms.setdefault(id_term(cid), "M")
    if rec.author:
        terms[author_term(rec.author)] = "A"
    return [(t, rec.generation, rec.hash, depth, rec.created_us, k)
            for t, k in sorted(terms.items())]


def put_ids(records: Iterable[CommitRecord]) -> set[str]:
    return {op.entry.content_id for r in records for op in r.operations
            if op.kind is OpKind.PUT and op.entry is not None}


_ANCESTOR_AT = text("""
WITH RECURSIVE up(hash, parent, depth, jump, jump_depth) AS (
    SELECT hash, parent, depth, jump, jump_depth FROM ancestry WHERE hash = :start
    UNION ALL
    SELECT a.hash, a.parent, a.depth, a.jump, a.jump_depth FROM ancestry a JOIN up
      ON a.hash = CASE WHEN up.jump_depth >= :d THEN up.jump ELSE up.parent END
    WHERE up.depth > :d
)
SELECT hash FROM up WHERE depth = :d
""")

_AT_OR_BEFORE = text("""
WITH RECURSIVE up(hash, parent, created_us, jump, jump_created_us) AS (
    SELECT hash, parent, created_us, jump, jump_created_us FROM ancestry WHERE hash = :start
    UNION ALL
    SELECT a.hash, a.parent, a.created_us, a.jump, a.jump_created_us FROM ancestry a JOIN up
      ON a.hash = CASE WHEN up.jump_created_us > :t THEN up.jump ELSE up.parent END
    WHERE up.created_us > :t AND up.parent IS NOT NULL
)
SELECT hash FROM up WHERE created_us <= :t
""")

_SELECT_ANCESTRY = select(ANCESTRY).where(ANCESTRY.c.hash.in_(
    bindparam("hashes", expanding=True)))

_POSTINGS = text(
    "SELECT generation, hash, depth, created_us, kind FROM changes "
    "WHERE term = :term AND (generation < :g OR (generation = :g AND hash < :h)) "
    "ORDER BY generation DESC, hash DESC LIMIT :n")


class ChangeIndex:
    def __init__(self, db: Database, cache_size: int = 50_000) -> None:
        self.db = db
        self._cache: LRU[str, Ancestry] = LRU(cache_size)

    # -- writing -------------------------------------------------------------------------
    def remember(self, rows: Iterable[Ancestry]) -> None:
        for a in rows:
            self._cache.put(a.hash, a)

    def ancestry(self, hashes: Sequence[str]) -> dict[str, Ancestry]:
        out = {h: a for h in hashes if (a := self._cache.get(h)) is not None}
        missing = [h for h in hashes if h not in out]
        if missing:
            with self.db.read() as conn:
                for row in conn.execute(_SELECT_ANCESTRY, {"hashes": missing}):
                    a = Ancestry(row.hash, row.parent, row.depth, row.created_us, row.jump,
                                 row.jump_depth, row.jump_created_us)
                    self._cache.put(a.hash, a)
                    out[a.hash] = a
        return out

    def plan(self, records: Sequence[CommitRecord], carried: dict[str, set[str]],
             ) -> tuple[list[Ancestry], list[tuple[object, ...]]]:
        """The ancestry and posting rows of new commits (each on the one
        before it, the first on a stored commit)."""
        known: dict[str, Ancestry] = {}
        anc: list[Ancestry] = []
        rows: list[tuple[object, ...]] = []
        for rec in records:
            parent = known.get(rec.parents[0]) or self._one(rec.parents[0])
            jump = known.get(parent.jump) or self._one(parent.jump)
            a = next_ancestry(rec.hash, rec.created_us, parent, jump)
            known[a.hash] = a
            anc.append(a)
            rows += change_rows(rec, a.depth, carried.get(rec.hash, ()))
        return anc, rows

    def _one(self, h: str) -> Ancestry:
        found = self.ancestry([h])
        if h not in found:
            raise LookupError(f"commit {h} has no ancestry row (run sapwood fsck)")
        return found[h]

    # -- reading -------------------------------------------------------------------------
    def ancestor_at(self, start: str, depth: int) -> str | None:
        """The commit at ``depth`` on ``start``'s first-parent chain."""
        with self.db.read() as conn:
            return conn.execute(_ANCESTOR_AT, {"start": start, "d": depth}).scalar()

    def on_chain(self, p: Posting | Ancestry, tip: Ancestry) -> bool:
        if p.depth > tip.depth:
            return False
        if p.depth == tip.depth:
            return p.hash == tip.hash
        return self.ancestor_at(tip.hash, p.depth) == p.hash

    def at_or_before(self, start: str, t_us: int) -> str | None:
        """The newest commit of ``start``'s first-parent chain made at or before ``t_us``."""
        with self.db.read() as conn:
            return conn.execute(_AT_OR_BEFORE, {"start": start, "t": t_us}).scalar()

    def postings(self, term: str, max_generation: int) -> Iterator[Posting]:
        """The term's commits, newest generation first, from ``max_generation`` down."""
        g, h = max_generation, "~"  # "~" sorts after every hex digit
        while True:
            with self.db.read() as conn:
                rows = conn.execute(_POSTINGS, {"term": term, "g": g, "h": h,
                                                "n": _BATCH}).all()
            for row in rows:
                yield Posting(row.generation, row.hash, row.depth, row.created_us, row.kind)
            if len(rows) < _BATCH:
                return
            # Next page: strictly after the last row in (generation, hash) order.
            g, h = rows[-1].generation, rows[-1].hash


# -- filling the index for commits written before it existed (migration 0005) --------
Rows = list[tuple[object, ...]]


def backfill(records: Sequence[CommitRecord]) -> Iterator[tuple[Ancestry, Rows]]:
    """The ancestry and posting rows of every commit, given all of them
    (any order): parents before children, merges' M rows computed as the
    writer computes them (what the source side brings in)."""
    by_hash = {r.hash: r for r in records}
    done: dict[str, Ancestry] = {}
    for rec in sorted(records, key=lambda r: (r.generation, r.hash)):
        yield index_rows(rec, done, by_hash.__getitem__)


def index_rows(rec: CommitRecord, done: dict[str, Ancestry],
               commit: Callable[[str], CommitRecord]) -> tuple[Ancestry, Rows]:
    """One commit's ancestry (added to ``done``, which holds its parents')
    and posting rows; ``commit`` reads what a merge's source side brings in."""
    if not rec.parents:  # the root commit
        a = Ancestry(rec.hash, None, 0, rec.created_us, rec.hash, 0, rec.created_us)
    else:
        parent = done[rec.parents[0]]
        a = next_ancestry(rec.hash, rec.created_us, parent, done[parent.jump])
    done[rec.hash] = a
    carried: set[str] = set()
    if len(rec.parents) > 1:
        carried = put_ids(only_in(commit, rec.parents[1], rec.parents[0]))
    return a, change_rows(rec, a.depth, carried)

