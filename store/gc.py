"""Garbage collection of store objects (``sapwood gc``): the commits no
reference reaches any more — a deleted branch's, a reset branch's — and the
index nodes and content values only they hold.

Mark: from every reference head and every commit a reflog entry younger
than the grace period named (so a branch deleted a minute ago can still be
recreated from its reflog), through every parent, every index node and every
entry, collecting the **packs** the live objects are stored in. Reachability
is computed over packs, not only commits: a transplanted or merged commit's
entries keep the pack locations of the commits that first wrote their
values, and index nodes point at children in older commits' packs, so an
unreachable commit whose pack holds a live object is kept.

Sweep: an unreachable commit older than the grace period whose pack (and
overflow packs) holds nothing live goes, with its change-index rows. The
sweep runs in one write transaction that holds the references (PostgreSQL:
a share lock on ``refs``; SQLite: the write lock), after checking that no
commit written since the mark refers to anything about to go (a branch made
from an unreachable commit, a transplant of one); if one does, nothing is
swept and the next run starts over. So a commit in flight is never broken.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import func, select, text

from core.commits import NO_ANCESTOR
from core.content import Content
from core.errors import InvalidInputError
from core.retention import DEFAULT_GRACE_S, MAX_GRACE_S
from core.settings import number_setting
from store import cutoff_index
from store.changes import change_rows, put_ids
from store.commit_records import CommitRecord, record_from_row
from store.mark import SELECT, load, mark, reach
from store.objects import ObjectReader, loc_of
from store.retained import Entries
from store.schema import COMMITS, REFLOG, REFS
from store.store import Store

_BATCH = 500
# A grace period longer than a century keeps everything; past it the
# arithmetic on microseconds would overflow (core.retention holds both).


def check_grace(grace_s: float, what: str = "grace period") -> float:
    """A grace period in seconds, finite and within [0, MAX_GRACE_S]."""
    if not math.isfinite(grace_s) or not 0 <= grace_s <= MAX_GRACE_S:
        raise InvalidInputError(f"Invalid {what} {grace_s!r}: expected seconds from 0 to "
                                f"{MAX_GRACE_S} (a hundred years)")
    return grace_s


@dataclass
class GcReport:
    dry_run: bool
    live_commits: int = 0
    live_objects: int = 0  # index nodes and content values reached
    # Live commits some reference retains (retention policies: the others
    # stay in the store, but a read of them is refused and their files go).
    retained_commits: int = 0
    # Per branch under a policy: commits of its chain no reference retains.
    expired: dict[str, int] = field(default_factory=dict)
    # Per branch under a policy: snapshots expired per table, and the commit
    # that did it (set by the catalog's gc, catalog.maintenance.expiry).
    snapshots_expired: dict[str, dict[str, int]] = field(default_factory=dict)
    expiry_commits: dict[str, str] = field(default_factory=dict)
    unreachable_commits: int = 0
    # Unreachable but kept: younger than the grace period, or their pack
    # holds live objects.
    kept_commits: int = 0
    removed_commits: int = 0
    removed_packs: int = 0
    removed_bytes: int = 0
    mark_s: float = 0.0
    sweep_s: float = 0.0
    # Set when the sweep found a commit written since the mark that needs
    # something it would have removed: nothing was removed.
    aborted: str | None = None
    removed: list[str] = field(default_factory=list)
    # When the mark read the references (epoch seconds), the last reflog
    # entry it had seen, and the commits it found live: what the warehouse
    # step needs to tell commits that landed since (contents_since).
    mark_started_s: float = 0.0
    mark_reflog: int = 0
    live: set[str] = field(default_factory=set, repr=False)
    # Idempotency-Keys past their lifetime, removed with their answers.
    expired_keys: int = 0
    # Change-feed events older than the retention (store.events).
    expired_events: int = 0

    def __str__(self) -> str:
        verb = "would remove" if self.dry_run else "removed"
        out = (f"{self.live_commits} live commits ({self.retained_commits} retained), "
               f"{self.live_objects} live objects; "
               f"{self.unreachable_commits} unreachable commits, {self.kept_commits} kept; "
               f"{verb} {self.removed_commits} commits and {self.removed_packs} overflow "
               f"packs ({self.removed_bytes:,} bytes); mark {self.mark_s:.2f} s, "
               f"sweep {self.sweep_s:.2f} s")
        if not self.dry_run:  # a dry run does not look for them
            out += (f"; {self.expired_keys} expired idempotency keys and "
                    f"{self.expired_events} events past their retention removed")
        if self.snapshots_expired:
            verb_s = "would expire" if self.dry_run else "expired"
            out += f"; snapshots {verb_s}: " + "; ".join(
                f"{branch}: " + ", ".join(f"{t} ({n})" for t, n in sorted(tables.items()))
                for branch, tables in sorted(self.snapshots_expired.items()))
        if self.expired:
            out += "; history expired: " + ", ".join(
                f"{n} commits of {ref}" for ref, n in sorted(self.expired.items()))
        return out + (f"; aborted: {self.aborted}" if self.aborted else "")


# Change-feed events are kept this long (a consumer further behind starts over).
DEFAULT_EVENT_RETENTION_S = 30 * 86_400


def event_retention() -> float:
    """SAPWOOD_EVENT_RETENTION_S, else 30 days."""
    # A second to a hundred years.
    return number_setting("SAPWOOD_EVENT_RETENTION_S", os.environ.get("SAPWOOD_EVENT_RETENTION_S"),
                          DEFAULT_EVENT_RETENTION_S, 1, 100 * 365 * 86_400)


def collect(store: Store, grace_s: float = DEFAULT_GRACE_S, dry_run: bool = False,
            now_us: int | None = None, contents: list[Content] | None = None,
            event_retention_s: float | None = None) -> GcReport:
    """Collect the store's garbage; ``contents``, when given, receives every
    content value the mark found live (what the warehouse must keep), so the
    warehouse step needs no second mark."""
    now_us = now_us if now_us is not None else store.clock()
    horizon = now_us - int(check_grace(grace_s) * 1_000_000)
    report = GcReport(dry_run)
    # Cold and private (the server's caches stay as they are), and large: a
    # mark reads every pack once, and evicting a pack's objects before they
    # are decoded reads it again (bounded: at most 400,000 objects held).
    reader = ObjectReader(store.db, node_cache_size=200_000)
    t = time.perf_counter()
    report.mark_started_s = time.time()
    with store.db.read() as conn:
        mark_reflog = conn.execute(text("SELECT max(id) FROM reflog")).scalar() or 0
    report.mark_reflog = mark_reflog
    marked = mark(store, reader, horizon, store.retention.gc_cuts(grace_s))
    live = marked.live
    report.live = set(live)
    report.live_commits = len(live)
    report.live_objects = marked.objects
    report.retained_commits = (len(marked.retained) if marked.retained is not None
                               else len(live))
    report.expired = marked.expired
    if contents is not None:
        contents += load(reader, marked.kept)
    report.mark_s = time.perf_counter() - t
    t = time.perf_counter()
    candidates = _candidates(store, live, horizon, marked.locs, report)
    if candidates and not dry_run:
        _sweep(store, reader, candidates, live, mark_reflog, report)
    elif candidates:
        report.removed_commits = len(candidates)
        report.removed = sorted(candidates)
        report.removed_bytes = sum(candidates.values())
    report.sweep_s = time.perf_counter() - t
    if not dry_run:
        # Expired Idempotency-Keys (store.idempotency): their answers go.
        report.expired_keys = store.keys.purge(now_us)
        # Change-feed events past their retention (SAPWOOD_EVENT_RETENTION_S).
        retention = event_retention_s if event_retention_s is not None else event_retention()
        report.expired_events = store.events.purge(now_us - int(retention * 1_000_000))
        # Branches deleted before the grace period retain nothing any more
        # (store.cutoff_index): their history went with this mark.
        with store.db.write() as conn:
            cutoff_index.purge(conn, horizon)
        # For /metrics of the process that ran it (the admin endpoint).
        store.stats.add("gc_runs")
        store.stats.add("gc_removed_commits", report.removed_commits)
    return report


def _candidates(store: Store, live: dict[str, CommitRecord], horizon: int,
                live_locs: set[str], report: GcReport) -> dict[str, int]:
    """Unreachable commits that may go, with the size of their packs."""
    with store.db.read() as conn:
        rows = conn.execute(select(COMMITS.c.hash, COMMITS.c.created_us,
                                   func.length(COMMITS.c.pack))).all()
    out: dict[str, int] = {}
    for h, created, size in rows:
        if h in live:
            continue
        report.unreachable_commits += 1
        if created >= horizon or loc_of(h) in live_locs:
            report.kept_commits += 1
            continue
        out[h] = int(size or 0)
    return out


def _sweep(store: Store, reader: ObjectReader, doomed: dict[str, int],
           live: dict[str, CommitRecord], mark_reflog: int, report: GcReport) -> None:
    doomed_locs = {loc_of(h) for h in doomed}
    with store.db.raw_write() as cur:
        if store.db.dialect == "postgresql":
            # Writers swap heads with UPDATE refs: they wait until this ends.
            cur.execute("LOCK TABLE refs IN SHARE ROW EXCLUSIVE MODE")
        p = store.db.param
        cur.execute(f"SELECT new_hash FROM reflog WHERE id > {p} AND new_hash IS NOT NULL",
                    (mark_reflog,))
        new_heads = {h for (h,) in cur.fetchall()}
        why = _needed_since_mark(store, reader, new_heads, live, doomed, doomed_locs)
        if why:
            report.aborted = why
            return
        hashes = sorted(doomed)
        records = _records(store, hashes)
        for i in range(0, len(hashes), _BATCH):
            chunk = hashes[i:i + _BATCH]
            marks = ", ".join([p] * len(chunk))
            cur.execute(f"DELETE FROM commits WHERE hash IN ({marks})", chunk)
            cur.execute(f"DELETE FROM ancestry WHERE hash IN ({marks})", chunk)
            for h in chunk:
                rec = records.get(h)
                if rec is None:
                    continue
                # A merge's M rows name what it brought in (store.changes).
                carried = put_ids(store.history.only_in(rec.parents[1], rec.parents[0])) \
                    if len(rec.parents) > 1 else set()
                for row in change_rows(rec, 0, carried):
                    cur.execute(f"DELETE FROM changes WHERE term = {p} AND generation = {p} "
                                f"AND hash = {p}", (row[0], row[1], row[2]))
        cur.execute("SELECT loc, length(data) FROM packs")
        packs = [(loc, n) for loc, n in cur.fetchall() if loc.split(".")[0] in doomed_locs]
        for loc, n in packs:
            cur.execute(f"DELETE FROM packs WHERE loc = {p}", (loc,))
            report.removed_bytes += n or 0
    report.removed_commits = len(doomed)
    report.removed_packs = len(packs)
    report.removed_bytes += sum(doomed.values())
    report.removed = sorted(doomed)


def _records(store: Store, hashes: list[str]) -> dict[str, CommitRecord]:
    out: dict[str, CommitRecord] = {}
    for i in range(0, len(hashes), _BATCH):
        with store.db.read() as conn:
            out.update((r.hash, record_from_row(r))
                       for r in conn.execute(SELECT, {"hashes": hashes[i:i + _BATCH]}))
    return out


def _needed_since_mark(store: Store, reader: ObjectReader, new_heads: Iterable[str],
                       live: dict[str, CommitRecord], doomed: dict[str, int],
                       doomed_locs: set[str]) -> str | None:
    """Why a commit written since the mark needs something about to go (None:
    nothing does). Walks the new commits down to the live ones."""
    todo = [h for h in new_heads if h not in live]
    seen: set[str] = set()
    while todo:
        h = todo.pop()
        if h in seen or h in live:
            continue
        seen.add(h)
        if h in doomed:
            return f"a reference moved to commit {h[:12]}, which was unreachable"
        rec = reader.commit(h)
        for op in rec.operations:
            if op.entry is not None and op.entry.loc and op.entry.loc.split(".")[0] in doomed_locs:
                return f"commit {h[:12]} reuses a value stored with an unreachable commit"
        if rec.root is not None and (rec.root[1] or "").split(".")[0] in doomed_locs:
            return f"commit {h[:12]} reuses an index stored with an unreachable commit"
        todo += list(rec.parents)
    return None


def contents_since(store: Store, report: GcReport) -> list[Content]:
    """The content values of every commit that landed since ``report``'s
    mark (reference heads now, and every head the reflog names since),
    walked down to the commits the mark found live: what the warehouse must
    keep besides what the mark found. Read just before files are deleted."""
    with store.db.read() as conn:
        heads = {h for (h,) in conn.execute(select(REFS.c.head))}
        heads |= {h for (h,) in conn.execute(
            select(REFLOG.c.new_hash).where(REFLOG.c.id > report.mark_reflog)) if h}
    reader = ObjectReader(store.db)
    todo = [h for h in heads if h not in report.live]
    seen: set[str] = set()
    fresh: dict[str, CommitRecord] = {}
    while todo:
        h = todo.pop()
        if h in seen or h in report.live or h == NO_ANCESTOR:
            continue
        seen.add(h)
        rec = reader.commit(h)
        fresh[h] = rec
        todo += list(rec.parents)
    entries: Entries = {}
    bulk: dict[str, CommitRecord] = {}
    for h, rec in fresh.items():
        if rec.depth == 0 and rec.root is not None:
            bulk[h] = rec  # an index written out whole: its values are under its root
            continue
        for op in rec.operations:  # what each commit put over its (walked) parents
            if op.entry is not None:
                entries.setdefault(op.entry.identity, op.entry.loc)
    if bulk:
        reach(reader, bulk, set(), set(), entries)
    return load(reader, entries) if entries else []


def live_contents(store: Store, grace_s: float = DEFAULT_GRACE_S) -> list[Content]:
    """The content values the warehouse must hold whole (gc's mark, reading
    only; fsck --files checks their files): every version a retained commit
    holds — every live commit's, while no retention policy is set."""
    horizon = store.clock() - int(check_grace(grace_s) * 1_000_000)
    reader = ObjectReader(store.db, node_cache_size=200_000)
    return load(reader, mark(store, reader, horizon, store.retention.gc_cuts(grace_s)).kept)
