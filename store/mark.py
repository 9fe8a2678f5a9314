"""gc's mark: every commit a reference reaches (the store keeps them all, so
history stays whole: parents, merge bases, logs), the packs their objects
live in, and what the warehouse must keep — the key states of the commits
the references *retain* (store.retention, store.retained), which is every
live commit while no retention policy is set.

Roots: every reference head, and every commit a reflog entry within the
grace period names (a branch deleted or reset a minute ago can be made
again). The retained states are walked first; the rest of the live
history then only adds the packs it needs, nodes already seen skipped."""

from __future__ import annotations

import gc as pygc
from dataclasses import dataclass, field
from itertools import repeat

from sqlalchemy import bindparam, select

from core.commits import NO_ANCESTOR, IndexEntry
from core.content import Content
from store.commit_records import COMMIT_COLUMNS, CommitRecord, record_from_row
from store.nodes import StoredRef
from store.objects import ObjectReader
from store.retained import Entries, retained
from store.retention import Cutoff
from store.schema import COMMITS, REFLOG, REFS
from store.store import Store

BATCH = 500
WALK_CHUNK = 256
ENTRY_BATCH = 16_384  # entries gathered before they go in (duplicates held meanwhile)
SELECT = select(*COMMIT_COLUMNS).where(COMMITS.c.hash.in_(bindparam("hashes", expanding=True)))


@dataclass
class Marked:
    live: dict[str, CommitRecord] = field(default_factory=dict)
    locs: set[str] = field(default_factory=set)  # the packs of every live object
    objects: int = 0  # live entries and index nodes
    kept: Entries = field(default_factory=dict)  # what the warehouse keeps
    # The commits some reference retains (None: no policy, all live ones).
    retained: set[str] | None = None
    # Per reference under a policy: commits of its chain no reference retains.
    expired: dict[str, int] = field(default_factory=dict)


def mark(store: Store, reader: ObjectReader, horizon_us: int,
         cuts: list[Cutoff] | None) -> Marked:
    out = Marked()
    collector_was_on = pygc.isenabled()
    # A mark allocates one small object per live object and frees none:
    # Python's cycle collector would rescan the growing heap again and again.
    pygc.disable()
    try:
        out.live = _live(store, _roots(store, horizon_us))
        seen: set[str] = set()
        entries: Entries = {}
        if cuts is not None:
            kept = retained(out.live, ((c.ref.hash, c.floor) for c in cuts))
            out.retained = kept.commits
            out.kept = dict(kept.entries)
            _walk(reader, kept.roots, seen, out.locs, out.kept)
            out.expired = _expired(out.live, cuts, kept.commits)
            entries.update(out.kept)
        reach(reader, out.live, seen, out.locs, entries)
        if cuts is None:
            out.kept = entries
        out.objects = len(entries) + len(seen)
        return out
    finally:
        if collector_was_on:
            pygc.enable()


def _roots(store: Store, horizon_us: int) -> set[str]:
    with store.db.read() as conn:
        heads = {h for (h,) in conn.execute(select(REFS.c.head))}
        recent = conn.execute(select(REFLOG.c.old_hash, REFLOG.c.new_hash)
                              .where(REFLOG.c.at_us >= horizon_us)).all()
    return heads | {h for row in recent for h in row if h} | {NO_ANCESTOR}


def _live(store: Store, roots: set[str]) -> dict[str, CommitRecord]:
    live: dict[str, CommitRecord] = {}
    queued = set(roots)
    todo = list(queued)
    while todo:
        batch, todo = todo[:BATCH], todo[BATCH:]
        with store.db.read() as conn:
            rows = conn.execute(SELECT, {"hashes": batch}).all()
        for row in rows:
            rec = record_from_row(row)
            live[rec.hash] = rec
            fresh = [p for p in rec.parents if p not in queued]
            queued.update(fresh)
            todo += fresh
    return live


def reach(reader: ObjectReader, live: dict[str, CommitRecord], seen: set[str],
           locs: set[str], entries: Entries) -> None:
    """The packs of every object the live commits reach and every entry they
    reach (identity → location: no objects built, the mark stays linear);
    index nodes in ``seen`` were walked already."""
    roots: list[StoredRef] = []
    for rec in live.values():
        if rec.root is not None:
            roots.append(rec.root)
        if rec.depth == 0 and rec.root is not None:
            # Its index was written out whole: its own values are under its
            # root (and a bulk commit's operations can be large to decode).
            continue
        for op in rec.operations:
            if op.entry is not None:
                entries.setdefault(op.entry.identity, op.entry.loc)
                if op.entry.loc:
                    locs.add(op.entry.loc)
    _walk(reader, roots, seen, locs, entries)


def _walk(reader: ObjectReader, refs: list[StoredRef], seen: set[str], locs: set[str],
          entries: Entries) -> None:
    """The index trees under ``refs``: their packs and entries. This runs once
    per live entry, so an entry costs C-level work only: nodes' identities and
    locations are gathered by ``list.extend`` and go into ``entries`` (an
    identity names one value, id included) and ``locs`` a batch at a time, in
    tight C loops that keep the tables they fill in the processor's cache."""
    idents: list[str] = []
    places: list[str | None] = []
    while refs:
        nxt: list[StoredRef] = []
        for i, ref in enumerate(refs):
            if i % WALK_CHUNK == 0:
                # A level's packs a chunk at a time, each node's text let go
                # once read: the walk's heap stays small.
                reader.prefetch_nodes([r for r in refs[i:i + WALK_CHUNK] if r[0] not in seen])
            if ref[0] in seen:
                continue
            seen.add(ref[0])
            node_idents, node_locs, kids, pack_loc = reader.walk_parts(ref)
            if pack_loc:
                locs.add(pack_loc)
            idents += node_idents
            if node_locs is None:
                places += repeat(pack_loc, len(node_idents))
            else:
                places += node_locs
            if len(idents) >= ENTRY_BATCH:
                _take(idents, places, locs, entries)
            nxt += [k for k in kids if k[0] not in seen]
        refs = nxt
    _take(idents, places, locs, entries)


def _take(idents: list[str], places: list[str | None], locs: set[str],
          entries: Entries) -> None:
    entries.update(zip(idents, places, strict=True))
    locs.update(places)  # type: ignore[arg-type]  # no pack (None, "") dropped next
    locs.difference_update((None, ""))
    idents.clear()
    places.clear()


def _expired(live: dict[str, CommitRecord], cuts: list[Cutoff],
             retained: set[str]) -> dict[str, int]:
    """Per branch under a policy: the commits of its chain past its cutoff
    that no reference retains (each counted once, for the first branch)."""
    out: dict[str, int] = {}
    counted: set[str] = set()
    for cut in cuts:
        if cut.policy is None or cut.floor is None:
            continue
        n = 0
        rec = live.get(cut.ref.hash)
        while rec is not None and rec.hash not in counted:
            counted.add(rec.hash)
            if rec.hash not in retained:
                n += 1
            rec = live.get(rec.parents[0]) if rec.parents else None
        if n:
            out[cut.ref.name] = n
    return out


def load(reader: ObjectReader, entries: Entries) -> list[Content]:
    """The content values of entries (table and view versions)."""
    out: list[Content] = []
    values = [IndexEntry.from_identity(ident, loc) for ident, loc in entries.items()]
    for i in range(0, len(values), BATCH):
        out += reader.load_contents(values[i:i + BATCH]).values()
    return out
