"""Retention policies kept in the catalog's database, and what they retain.

The list lives in one table (``retention_policies``), read on every use, so
replicas agree from the moment it is replaced. A branch's history is its
first-parent chain: under a policy it retains the commits of that chain
made at or after its cutoff (core.retention.cutoff_us), and always its
head; under none, all of it; a tag retains its head. Whether a commit is
retained is asked only of commits that are not a head (a read at
``name*T``, ``name@hash``, ``name~n``, ``@hash``), and with no policy at all
it costs one small query. Otherwise the reference the reader named is
asked first, then the references that could retain the commit are found by
the cutoff index (store.cutoff_index: one statement of index ranges,
whatever the number of references), and each of those costs O(log n)
look-ups down the chain's skip pointers (store.changes)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import delete, insert, select

from core.commits import RefType
from core.errors import HistoryExpiredError
from core.instants import format_instant, from_micros
from core.retention import (
    DEFAULT_GRACE_S,
    MAX_GRACE_S,
    MAX_US,
    MIN_US,
    Policy,
    cutoff_us,
    policies,
    policy_of,
)
from core.settings import number_setting
from store import cutoff_index
from store.changes import Ancestry, ChangeIndex
from store.db import Database
from store.schema import REFLOG, REFS, RETENTION

_POLICIES = "SELECT refs, keep, keep_commits FROM retention_policies ORDER BY position"


@dataclass(frozen=True)
class Head:
    name: str
    type: RefType
    hash: str


@dataclass(frozen=True)
class Cutoff:
    """What a reference retains: commits of its chain made at or after
    ``at_us`` (None: all of them; a tag: its head only)."""

    ref: Head
    policy: Policy | None
    at_us: int | None

    @property
    def floor(self) -> int | None:
        """The cutoff as gc's mark walks it: a tag keeps its head alone."""
        return MAX_US if self.ref.type is RefType.TAG else self.at_us

    def retains_time(self, created_us: int) -> bool:
        if self.ref.type is RefType.TAG:
            return False
        return self.at_us is None or created_us >= self.at_us


class Retention:
    def __init__(self, db: Database, changes: ChangeIndex, clock: Callable[[], int]) -> None:
        self.db = db
        self.changes = changes
        self.clock = clock

    # -- the list ----------------------------------------------------------------------
    def policies(self) -> list[Policy]:
        # Prebuilt SQL on a dedicated connection: read on every read at a
        # commit that is not a head.
        rows = self.db.raw_read(_POLICIES, ())
        return [Policy(r[0], r[1], r[2]) for r in rows]

    def replace(self, items: list[Policy]) -> None:
        """The whole list, in matching order, in one transaction, with every
        reference's class in the cutoff index."""
        policies(items)
        with self.db.write() as conn:
            cutoff_index.lock(conn)
            conn.execute(delete(RETENTION))
            if items:
                conn.execute(insert(RETENTION), [
                    {"position": i, "refs": p.refs, "keep": p.keep,
                     "keep_commits": p.keep_commits} for i, p in enumerate(items)])
            cutoff_index.reclassify(conn, items)

    # -- what the references retain ----------------------------------------------------
    def heads(self) -> list[Head]:
        with self.db.read() as conn:
            rows = conn.execute(select(REFS.c.name, REFS.c.type, REFS.c.head)
                                .order_by(REFS.c.name)).all()
        return [Head(r.name, RefType(r.type), r.head) for r in rows]

    def cutoffs(self, items: list[Policy] | None = None, heads: Iterable[Head] | None = None,
                now_us: int | None = None) -> list[Cutoff]:
        """Every reference's cutoff now (or at ``now_us``)."""
        items = self.policies() if items is None else items
        now_us = self.clock() if now_us is None else now_us
        return [self.cutoff(h, items, now_us) for h in (self.heads() if heads is None
                                                         else heads)]

    def cutoff(self, head: Head, items: list[Policy], now_us: int) -> Cutoff:
        if head.type is RefType.TAG:
            return Cutoff(head, None, None)
        p = policy_of(items, head.name)
        if p is None:
            return Cutoff(head, None, None)
        nth = None
        if p.keep_commits is not None:
            tip = self.changes.ancestry([head.hash])[head.hash]
            depth = tip.depth - (p.keep_commits - 1)
            if depth >= 0:
                at = self.changes.ancestor_at(head.hash, depth)
                nth = self.changes.ancestry([at])[at].created_us if at else None
        return Cutoff(head, p, cutoff_us(p, now_us, nth))

    def retained_by(self, h: str, cut: Cutoff, me: Ancestry | None = None) -> bool:
        """Whether ``cut``'s reference retains commit ``h``."""
        if h == cut.ref.hash:
            return True
        me = me or self.changes.ancestry([h])[h]
        if not cut.retains_time(me.created_us):
            return False
        tip = self.changes.ancestry([cut.ref.hash])[cut.ref.hash]
        return self.changes.on_chain(me, tip)

    def deleted_heads(self, horizon_us: int) -> list[Head]:
        """Branches deleted at or after ``horizon_us`` (and not made again),
        at the head they had: they retain their history for gc's grace
        period, so they can be made again from the reflog."""
        with self.db.read() as conn:
            rows = conn.execute(select(REFLOG.c.ref, REFLOG.c.ref_type, REFLOG.c.old_hash)
                                .where(REFLOG.c.new_hash.is_(None),
                                       REFLOG.c.at_us >= horizon_us)
                                .order_by(REFLOG.c.at_us)).all()
        live = {h.name for h in self.heads()} if rows else set()
        found = {r.ref: Head(r.ref, RefType(r.ref_type), r.old_hash) for r in rows
                 if r.old_hash and r.ref not in live}
        return list(found.values())

    def candidates(self, grace_s: float) -> list[Head]:
        """Every reference, and every branch deleted within ``grace_s``."""
        return [*self.heads(), *self.deleted_heads(self.clock() - int(grace_s * 1_000_000))]

    def gc_cuts(self, grace_s: float) -> list[Cutoff] | None:
        """The cutoff of every reference and every branch deleted within the
        grace period, for gc's mark (store.mark); None while no policy is
        set (everything a reference reaches is kept, as ever)."""
        items = self.policies()
        if not items:
            return None
        now_us = self.clock()
        return [self.cutoff(head, items, now_us) for head in self.candidates(grace_s)]

    def retained_among(self, hashes: list[str]) -> set[str]:
        """Which of ``hashes`` some reference retains (all of them while no
        policy is set); the policies are read once."""
        items = self.policies()
        if not items or not hashes:
            return set(hashes)
        now_us = self.clock()
        mine = self.changes.ancestry(hashes)
        return {h for h in hashes if h in mine
                and self._retainer(h, mine[h], items, now_us, None)[0]}

    def cutoff_of(self, name: str) -> int | None:
        """The time before which branch ``name``'s history has expired (None:
        it retains all of it, or it is no branch)."""
        items = self.policies()
        if not items:
            return None
        with self.db.read() as conn:
            row = conn.execute(select(REFS.c.type, REFS.c.head)
                               .where(REFS.c.name == name)).first()
        head = Head(name, RefType(row.type), row.head) if row is not None else None
        if head is None or head.type is not RefType.BRANCH:
            return None
        at = self.cutoff(head, items, self.clock()).at_us
        return None if at is None or at <= MIN_US else at

    def check(self, h: str, named: str | None = None) -> None:
        """Nothing when some reference retains commit ``h`` (or a branch
        deleted within gc's grace period does); else HistoryExpiredError
        naming the policy and cutoff of ``named`` (the reference the reader
        named, which it may read) and no other reference."""
        items = self.policies()
        if not items:
            return
        me = self.changes.ancestry([h])[h]
        kept, own = self._retainer(h, me, items, self.clock(), named)
        if not kept:
            raise HistoryExpiredError(_expired(h, own, me))

    def _retainer(self, h: str, me: Ancestry, items: list[Policy], now_us: int,
                  named: str | None) -> tuple[bool, Cutoff | None]:
        """Whether some reference retains ``h``, and the cutoff of ``named``
        (a live branch or tag) when it was asked. The named reference first
        (the one most likely to hold it), then the cutoff index's candidates."""
        own = None
        if named is not None:
            rows = self.db.raw_read(f"SELECT type, head FROM refs WHERE name = {self.db.param}",
                                    (named,))
            if rows:
                own = self.cutoff(Head(named, RefType(rows[0][0]), rows[0][1]), items, now_us)
                if self.retained_by(h, own, me):
                    return True, own
        horizon = now_us - int(grace_setting() * 1_000_000)
        for name, kind, head in cutoff_index.candidates(
                self.db, me.depth, now_us - me.created_us, cutoff_index.counts_of(items),
                horizon):
            if own is not None and (name, head) == (own.ref.name, own.ref.hash):
                continue
            if self.retained_by(h, self.cutoff(Head(name, kind, head), items, now_us), me):
                return True, own
        return False, own


def _expired(h: str, owner: Cutoff | None, me: Ancestry) -> str:
    """Why commit ``h`` reads no more, naming only the reference the reader
    named (``owner``): another one's name may be one it may not know of."""
    made = format_instant(from_micros(me.created_us))
    if owner is None or owner.at_us is None or owner.policy is None:
        return (f"Commit {h[:12]} (made {made}) is past every reference's retention: no "
                "branch or tag retains it any more, and its files may be gone")
    if owner.at_us >= MAX_US:
        since = "only its head is retained"
    elif owner.at_us <= MIN_US:
        since = "its chain does not hold this commit"
    else:
        since = f"its history before {format_instant(from_micros(owner.at_us))} has expired"
    return (f"Commit {h[:12]} (made {made}) is past the retention of '{owner.ref.name}' "
            f"({owner.policy.describe()}): {since}, and no other reference retains this "
            "commit")


def grace_setting() -> float:
    """SAPWOOD_GC_GRACE_S, else a week: how long a deleted branch keeps its
    history (gc uses the same, unless told otherwise for one run)."""
    return number_setting("SAPWOOD_GC_GRACE_S", os.environ.get("SAPWOOD_GC_GRACE_S"),
                          DEFAULT_GRACE_S, 0, MAX_GRACE_S)
