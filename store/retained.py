"""What the references retain, as gc's mark needs it (store.gc): the
commits each reference retains (store.retention) and every entry their key
states hold, exactly — a value a retained commit's state no longer holds
(overwritten, deleted) is not retained through it, so the files of expired
table versions can go.

A commit's state is its root plus the fold of the operations of the commits
since that root was materialized (store.state). Retained commits come in
runs along first-parent chains; a run's states are folded forward once from
the commit before its oldest member's delta began, so the cost is the
run's length plus at most one delta (DEPTH_LIMIT commits), and chains that
share history walk it once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.retention import MAX_US
from store.commit_records import CommitRecord
from store.nodes import StoredRef
from store.state import Delta

# A cutoff: commits of the chain made at or after it are retained (None:
# all of them); HEAD_ONLY: the head alone (a tag, a policy of neither kind).
HEAD_ONLY = MAX_US
# Entry identity (type, content id, value hash: one value) → its location.
Entries = dict[str, str | None]


@dataclass
class Retained:
    commits: set[str] = field(default_factory=set)
    entries: Entries = field(default_factory=dict)
    roots: list[StoredRef] = field(default_factory=list)


def retained(live: dict[str, CommitRecord],
             cuts: Iterable[tuple[str, int | None]]) -> Retained:
    """The commits and entries ``cuts`` (head, cutoff) retain among the
    ``live`` commits (every commit gc's mark found, records loaded)."""
    out = Retained()
    reach: dict[str, int] = {}  # commit → the lowest cutoff it was walked with
    for head, cutoff in cuts:
        floor = -(2**63) if cutoff is None else cutoff
        for run in _runs(live, head, floor, reach, out.commits):
            _fold(live, run, out)
    return out


def _runs(live: dict[str, CommitRecord], head: str, floor: int, reach: dict[str, int],
          taken: set[str]) -> list[list[CommitRecord]]:
    """The commits newly retained down ``head``'s chain, in runs of
    consecutive ones (newest first)."""
    runs: list[list[CommitRecord]] = []
    run: list[CommitRecord] = []
    rec = live.get(head)
    first = True
    while rec is not None and (first or rec.created_us >= floor):
        before = reach.get(rec.hash)
        if before is not None and before <= floor:
            break  # walked already with a reach at least as far back
        reach[rec.hash] = floor if before is None else min(before, floor)
        if rec.hash in taken:
            if run:
                runs.append(run)
                run = []
        else:
            taken.add(rec.hash)
            run.append(rec)
        if floor == HEAD_ONLY:
            break
        first = False
        rec = live.get(rec.parents[0]) if rec.parents else None
    if run:
        runs.append(run)
    return runs


def _fold(live: dict[str, CommitRecord], run: list[CommitRecord], out: Retained) -> None:
    """Every entry of every state in ``run`` (newest first)."""
    oldest = run[-1]
    before: list[CommitRecord] = []
    rec = oldest
    for _ in range(oldest.depth):  # back to where its delta began
        nxt = live.get(rec.parents[0]) if rec.parents else None
        if nxt is None:
            break
        before.append(nxt)
        rec = nxt
    delta: Delta = {}
    members = {r.hash for r in run}
    for rec in [*reversed(before), *reversed(run)]:
        if rec.depth == 0:
            delta = {}  # materialized: its root holds everything
        else:
            delta.update(rec.changes())
        if rec.hash in members:
            if rec.root is not None:
                out.roots.append(rec.root)
            for e in delta.values():
                if e is not None:
                    out.entries.setdefault(e.identity, e.loc)
