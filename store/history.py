"""Walking the commit graph: first-parent chains (recursive SQL, one query per
page), ancestry and merge bases (pruned by generation numbers, so the cost is
the distance between the commits, not the length of history)."""

from __future__ import annotations

import heapq

from sqlalchemy import text

from core.commits import NO_ANCESTOR
from store.db import Database
from store.objects import COMMIT_COLUMNS, CommitRecord, ObjectReader, record_from_row

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
_NTH = text(_WALK + "SELECT hash FROM chain WHERE depth = :last")

_AT_OR_BEFORE = text("""
WITH RECURSIVE chain(hash, parent, created_us, depth) AS (
    SELECT hash, parent, created_us, 0 FROM commits WHERE hash = :start
    UNION ALL
    SELECT c.hash, c.parent, c.created_us, chain.depth + 1
    FROM commits c JOIN chain ON c.hash = chain.parent
    WHERE chain.created_us > :t
)
SELECT hash FROM chain WHERE created_us <= :t ORDER BY depth LIMIT 1
""")


class History:
    def __init__(self, db: Database, reader: ObjectReader) -> None:
        self.db = db
        self.reader = reader

    def chain(self, start: str, limit: int) -> list[CommitRecord]:
        """Up to ``limit`` commits along first parents from ``start`` (inclusive)."""
        with self.db.read() as conn:
            rows = conn.execute(_CHAIN, {"start": start, "last": limit - 1}).all()
        out = []
        for row in rows:
            rec = record_from_row(row)
            self.reader.remember_commit(rec)
            out.append(rec)
        return out

    def touching(self, start: str, content_id: str, batch: int = 200) -> list[CommitRecord]:
        """Every commit reachable from ``start`` over all parents (merged-in
        sides too) that puts the content ``content_id``, newest first by time.
        Walks first-parent runs in batches; O(history), for audits."""
        seen: set[str] = set()
        found: list[CommitRecord] = []
        todo = [start]
        while todo:
            cursor: str | None = todo.pop()
            while cursor and cursor != NO_ANCESTOR and cursor not in seen:
                run = self.chain(cursor, batch)
                cursor = None
                for rec in run:
                    if rec.hash in seen or rec.hash == NO_ANCESTOR:
                        break
                    seen.add(rec.hash)
                    todo.extend(rec.parents[1:])
                    if any(op.entry is not None and op.entry.content_id == content_id
                           for op in rec.operations):
                        found.append(rec)
                else:
                    if run and run[-1].parents:
                        cursor = run[-1].parents[0]
        found.sort(key=lambda r: r.created_us, reverse=True)
        return found

    def nth_ancestor(self, start: str, n: int) -> str | None:
        if n == 0:
            return start
        with self.db.read() as conn:
            return conn.execute(_NTH, {"start": start, "last": n}).scalar()

    def newest_at_or_before(self, start: str, t_us: int) -> str | None:
        with self.db.read() as conn:
            return conn.execute(_AT_OR_BEFORE, {"start": start, "t": t_us}).scalar()

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
