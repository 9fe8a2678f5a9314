"""fsck of the change index (store.changes): every commit's ancestry row and
posting rows, recomputed from the commits themselves as migration 0005
computes them, must be exactly what the tables hold — a row missing, wrong
or extra would make an audit or a filtered log silently incomplete.

In bounded memory: commits are read a batch at a time in generation order
(from a skeleton of hash and generation per commit, the only thing held for
all of them besides each commit's ancestry), and the posting rows are
compared by digest — per bucket of terms, the count and sum of the rows'
hashes — with the exact rows of the buckets whose digests differ (a damaged
index) gathered only then, as many buckets at once as a bound on rows
allows."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterator

from sqlalchemy import Table, bindparam, select, tuple_

from core.lru import LRU
from store.changes import Ancestry, index_rows
from store.commit_records import COMMIT_COLUMNS, CommitRecord, record_from_row
from store.db import Database
from store.schema import ANCESTRY, CHANGES, COMMITS

# (kind, where, detail) → the report's Problem
Report = Callable[[str, str, str], None]
# (stage, items done) → a progress line
Progress = Callable[[str, int], None] | None

_BATCH = 500
# Commits read whole (operations included) per query: a bulk load's are a
# megabyte each.
_FULL_BATCH = 25
_PAGE = 5_000
_BUCKETS = 256
# The exact rows a damaged index is compared by, gathered at once (wanted
# and held; a few hundred bytes each): see _groups.
_DAMAGE_ROWS = 100_000
MERGE_CACHE_BYTES = 64 * 1024 * 1024
_SELECT_FULL = select(*COMMIT_COLUMNS).where(
    COMMITS.c.hash.in_(bindparam("hashes", expanding=True)))
Row = tuple[object, ...]


class _Digests:
    """Per bucket of terms: how many rows, and the sum of their hashes."""

    def __init__(self) -> None:
        self.count = [0] * _BUCKETS
        self.total = [0] * _BUCKETS

    def add(self, row: Row) -> None:
        b = bucket(row)
        self.count[b] += 1
        self.total[b] = (self.total[b] + _row_hash(row)) & 0xFFFFFFFFFFFFFFFF

    def differing(self, other: _Digests) -> list[int]:
        return [b for b in range(_BUCKETS) if self.count[b] != other.count[b]
                or self.total[b] != other.total[b]]


def bucket(row: Row) -> int:
    return zlib.crc32(str(row[0]).encode()) % _BUCKETS


def _row_hash(row: Row) -> int:
    text = "\x1f".join(str(x) for x in row)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def check_change_index(db: Database, report: Report, progress: Progress = None,
                       cache_bytes: int = MERGE_CACHE_BYTES) -> int:
    """Compare the index with the commits; returns the number of rows checked.
    ``cache_bytes``: what the commits a merge brings in may hold."""
    done: dict[str, Ancestry] = {}
    want = _Digests()
    checked = 0
    for _, rows in _wanted(db, done, progress, cache_bytes):
        for row in rows:
            want.add(row)
        checked += 1 + len(rows)
    # Ancestry rows, streamed, against the ones computed (one per commit).
    seen: set[str] = set()
    for row in _rows(db, ANCESTRY):
        a = done.get(str(row[0]))
        seen.add(str(row[0]))
        if a is None:
            report("unexpected-ancestry", str(row[0])[:12], "ancestry row of no commit")
        elif row != a.row():
            report("bad-ancestry", str(row[0])[:12], f"holds {row[1:]}, expected {a.row()[1:]}")
    for h in sorted(set(done) - seen):
        report("missing-ancestry", h[:12], "no ancestry row")
    # Posting rows: digests first; the rows themselves only where they differ.
    have = _Digests()
    for row in _rows(db, CHANGES):
        have.add(row)
    for group in _groups(want.differing(have), want, have):
        wanted = {row for _, rows in _wanted(db, {}, None, cache_bytes) for row in rows
                  if bucket(row) in group}
        held = {row for row in _rows(db, CHANGES) if bucket(row) in group}
        for row in sorted(wanted - held, key=str):
            report("missing-change", str(row[2])[:12], f"no {row[5]} row for {row[0]}")
        for row in sorted(held - wanted, key=str):
            report("unexpected-change", str(row[2])[:12],
                   f"{row[5]} row for {row[0]} that the commit does not justify")
    return checked


def _groups(buckets: list[int], want: _Digests, have: _Digests) -> Iterator[set[int]]:
    """The differing buckets in groups whose rows (wanted and held) number at
    most _DAMAGE_ROWS together, but for a bucket larger than that alone: each
    group costs a pass over the commits and the index, so a few damaged rows
    cost one pass, not one per bucket they fall in (256 passes for rows in
    every bucket)."""
    group: set[int] = set()
    size = 0
    for b in buckets:
        n = want.count[b] + have.count[b]
        if group and size + n > _DAMAGE_ROWS:
            yield group
            group, size = set(), 0
        group.add(b)
        size += n
    if group:
        yield group


def _rows(db: Database, table: Table) -> Iterator[Row]:
    """Every row of ``table``, a page at a time in primary-key order (a
    read connection may not hold a server-side cursor)."""
    pk = list(table.primary_key.columns)
    after: Row | None = None
    while True:
        q = select(*table.c).order_by(*pk).limit(_PAGE)
        if after is not None:
            q = q.where(tuple_(*pk) > tuple_(*after))
        with db.read() as conn:
            page = [tuple(r) for r in conn.execute(q)]
        yield from page
        if len(page) < _PAGE:
            return
        last = page[-1]
        after = tuple(last[list(table.c).index(c)] for c in pk)


def _wanted(db: Database, done: dict[str, Ancestry], progress: Progress,
            cache_bytes: int) -> Iterator[tuple[CommitRecord, list[Row]]]:
    """Every commit (parents first) with the posting rows it should have;
    ``done`` collects each one's ancestry."""
    with db.read() as conn:
        skeleton = sorted(conn.execute(select(COMMITS.c.generation, COMMITS.c.hash)).all())
    # Merges read the commits their source side brings in: a few recent ones
    # (bounded by bytes too: a bulk commit's operations are megabytes).
    cache: LRU[str, CommitRecord] = LRU(
        500, cache_bytes, lambda r: 1_000 + 8 * len(r._ops_raw or ""))

    def load(h: str) -> CommitRecord:
        rec = cache.get(h)
        if rec is None:
            with db.read() as conn:
                rows = conn.execute(_SELECT_FULL, {"hashes": [h]}).all()
            rec = record_from_row(rows[0])
            cache.put(h, rec)
        return rec

    for at in range(0, len(skeleton), _FULL_BATCH):
        hashes = [h for _, h in skeleton[at:at + _FULL_BATCH]]
        with db.read() as conn:
            found = {r.hash: record_from_row(r)
                     for r in conn.execute(_SELECT_FULL, {"hashes": hashes})}
        for h in hashes:
            # Let go of each commit once done: its decoded operations are the
            # bulk of what this holds.
            rec = found.pop(h)
            yield rec, index_rows(rec, done, load)[1]
        if progress is not None:
            progress("change index", min(at + _FULL_BATCH, len(skeleton)))
