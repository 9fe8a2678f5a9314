"""Walking the commit graph: first-parent chains (recursive SQL, one query per
page), ancestry, merge bases and what a merge brings in (pruned by generation
numbers, so the cost is the distance between the commits, not the length of
history). Questions about the whole history go to the change index
(store.changes)."""

from __future__ import annotations

import heapq
from collections.abc import Callable

from sqlalchemy import text

from core.commits import NO_ANCESTOR
from store.commit_records import COMMIT_COLUMNS, LIGHT_COLUMNS, CommitRecord, record_from_row
from store.db import Database
from store.objects import ObjectReader

# First parents from :start, at most :last steps back.
_WALK = """
WITH RECURSIVE chain(hash, parent, depth) AS (
    SELECT hash, parent, 0 FROM commits WHERE hash = :start
    UNION ALL
    SELECT c.hash, c.parent, chain.depth + 1
    FROM commits c JOIN chain ON c.hash = chain.parent
    WHERE chain.depth < :last
)
"""
_COLUMNS = ", ".join(f"c.{c.name}" for c in COMMIT_COLUMNS)
_CHAIN = text(_WALK + f"SELECT {_COLUMNS} FROM chain JOIN commits c ON c.hash = chain.hash "
              "ORDER BY chain.depth")
_LIGHT = ", ".join(f"c.{c.name}" for c in LIGHT_COLUMNS)
_CHAIN_LIGHT = text(_WALK + f"SELECT {_LIGHT} FROM chain JOIN commits c ON c.hash = chain.hash "
                    "ORDER BY chain.depth")


class History:
    def __init__(self, db: Database, reader: ObjectReader) -> None:
        self.db = db
        self.reader = reader

    def chain(self, start: str, limit: int, light: bool = False) -> list[CommitRecord]:
        """Up to ``limit`` commits along first parents from ``start``
        (inclusive); ``light``: without their operations (a log page)."""
        with self.db.read() as conn:
            rows = conn.execute(_CHAIN_LIGHT if light else _CHAIN,
                                {"start": start, "last": limit - 1}).all()
        out = []
        for row in rows:
            rec = record_from_row(row)
            self.reader.remember_commit(rec)
            out.append(rec)
        return out

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if ancestor in (descendant, NO_ANCESTOR):
            return True
        target = self.reader.commit(ancestor).generation
        seen = {descendant}
        todo = [descendant]
        while todo:
            rec = self.reader.commit(todo.pop())
            for p in rec.parents:
                if p == ancestor:
                    return True
                if p not in seen and self.reader.commit(p).generation > target:
                    seen.add(p)
                    todo.append(p)
        return False

    def merge_base(self, a: str, b: str) -> str | None:
        """The common ancestor of highest generation (paint-down, newest first)."""
        if a == b:
            return a
        # A parent's generation is below all its children's, so by the time a
        # commit is popped every path to it has been painted.
        flags = {a: 1, b: 2}
        heap = [(-self.reader.commit(h).generation, h) for h in flags]
        heapq.heapify(heap)
        while heap:
            _, h = heapq.heappop(heap)
            f = flags[h]
            if f == 3:
                return h
            for p in self.reader.commit(h).parents:
                old = flags.get(p, 0)
                if old | f != old:
                    flags[p] = old | f
                    if old == 0:
                        heapq.heappush(heap, (-self.reader.commit(p).generation, p))
        return None

    def only_in(self, source: str, target: str) -> list[CommitRecord]:
        """The commits reachable from ``source`` and not from ``target``
        (``git rev-list target..source``), newest generation first: what a
        merge of ``source`` into ``target`` brings in."""
        return only_in(self.reader.commit, source, target)


def only_in(commit: Callable[[str], CommitRecord], source: str, target: str,
            ) -> list[CommitRecord]:
    """History.only_in over any way of reading a commit by hash (the store's
    reader, or commits held in memory by a migration)."""
    if source == target:
        return []
    flags = {source: 1, target: 2}
    heap = [(-commit(h).generation, h) for h in flags]
    heapq.heapify(heap)
    out: list[CommitRecord] = []
    # Children before parents (generation order): a commit's flags are final
    # when it is popped. Once only target-reachable commits are left, nothing
    # further can be source-only.
    while heap and not all(flags[h] & 2 for _, h in heap):
        _, h = heapq.heappop(heap)
        f = flags[h]
        rec = commit(h)
        if f == 1:
            out.append(rec)
        for p in rec.parents:
            old = flags.get(p, 0)
            if old | f != old:
                flags[p] = old | f
                if old == 0:
                    heapq.heappush(heap, (-commit(p).generation, p))
    return out
