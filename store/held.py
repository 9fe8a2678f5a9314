"""Which versions of one object (a content id) history retains, as gc
counts them: what must not be deleted from under anyone.

* Under retention policies (store.retention): per reference, and per branch
  deleted within gc's grace period, the commits of its first-parent chain
  that put the object from its cutoff on, and the version its oldest
  retained commit holds (the newest commit of the chain that put it before
  the cutoff; for a tag, or a policy that keeps only the head, the version
  at the head).
* With no policy at all, history is retained whole: every commit that puts
  the object and is reachable (over every parent) from a reference's head
  or from a head the reflog names within the grace period (store.mark's
  roots).

Found from the change index's postings for the object (store.changes), so
the cost is the commits that put it times an O(log n) chain test, not the
history's length; the tests' answers never change (a commit's chain is
immutable) and are kept. It over-approximates where being exact would cost
more — an object deleted on a chain after the commit that put it still
counts as held there — which only ever keeps more."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from sqlalchemy import select

from core.commits import IndexEntry, OpKind, RefType
from core.errors import CommitNotFoundError
from core.keys import ContentKey
from core.lru import LRU
from core.retention import MIN_US
from store.changes import Ancestry, Posting, id_term
from store.retention import Head
from store.schema import REFLOG
from store.store import Store

# Reflog reasons that move a head to a descendant of the old one.
_FORWARD = ("commit", "merge", "transplant")


class Holding(Enum):
    BRANCH = "branch"
    TAG = "tag"
    DELETED = "deleted branch"  # within gc's grace period
    EARLIER = "earlier head"  # a head the reflog names within the grace period


@dataclass(frozen=True, slots=True)
class Held:
    """A version of the object that ``ref`` retains: put by ``commit`` at ``key``."""

    ref: str
    holding: Holding
    commit: str
    key: ContentKey
    entry: IndexEntry


class HeldVersions:
    def __init__(self, store: Store, cache_size: int = 100_000) -> None:
        self.store = store
        # (posting's commit, tip) -> whether the commit is on the tip's chain.
        self._chain: LRU[tuple[str, str], bool] = LRU(cache_size)

    def of(self, content_id: str, grace_s: float) -> list[Held]:
        """Every version of ``content_id`` a reference retains (repeated
        when several do)."""
        retention = self.store.retention
        items = retention.policies()
        now_us = retention.clock()
        horizon_us = now_us - int(grace_s * 1_000_000)
        if not items:
            return self._reached(content_id, self._roots(horizon_us))
        out: list[Held] = []
        heads = [(h, Holding.TAG if h.type is RefType.TAG else Holding.BRANCH)
                 for h in retention.heads()]
        heads += [(h, Holding.DELETED) for h in retention.deleted_heads(horizon_us)]
        for head, holding in heads:
            cut = retention.cutoff(head, items, now_us)
            out += self._on_chain(content_id, head, holding, cut.floor)
        return out

    # -- under policies: one chain per reference -------------------------------------------
    def _on_chain(self, content_id: str, head: Head, holding: Holding,
                  floor: int | None) -> list[Held]:
        """The versions ``head``'s chain retains from ``floor`` (None: all of
        it) on, and the one its oldest retained commit holds."""
        tip = self._tip(head.hash)
        if tip is None:
            return []
        oldest = self._oldest_retained(tip, floor)
        out: list[Held] = []
        covered = False  # whether the oldest retained commit put the object itself
        term = id_term(content_id)
        for p in self.store.changes.postings(term, self._generation(head.hash)):
            if p.kind != "P" or not self._is_on(p, tip):
                continue
            if p.depth >= oldest:
                out += self._puts(content_id, p.hash, head.name, holding)
                covered = p.depth == oldest
                continue
            # The version the oldest retained commit holds (commits older
            # than it are not retained, nor are their versions).
            if not covered:
                out += self._puts(content_id, p.hash, head.name, holding)
            break
        return out

    def _oldest_retained(self, tip: Ancestry, floor: int | None) -> int:
        """The depth of the oldest commit of ``tip``'s chain retained under
        ``floor``: its commits made at or after it, and always the head."""
        if floor is None or floor <= MIN_US:
            return 0
        if floor > tip.created_us:
            return tip.depth
        changes = self.store.changes
        before = changes.at_or_before(tip.hash, floor - 1)
        if before is None:
            return 0
        found = changes.ancestry([before]).get(before)
        return found.depth + 1 if found is not None else 0

    # -- no policy: everything reachable ---------------------------------------------------
    def _roots(self, horizon_us: int) -> list[tuple[Head, Holding]]:
        """The heads, and the heads the reflog names within the grace period
        that they may not reach: a reference's entries chain up (each one's
        old head is the one before's new head) and a commit, merge or
        transplant only moves a head forward, so the heads left behind by
        the other entries (assigned, deleted) reach every head it names."""
        store = self.store
        roots = [(h, Holding.TAG if h.type is RefType.TAG else Holding.BRANCH)
                 for h in store.retention.heads()]
        with store.db.read() as conn:
            rows = conn.execute(select(REFLOG.c.ref, REFLOG.c.ref_type, REFLOG.c.old_hash)
                                .where(REFLOG.c.at_us >= horizon_us,
                                       REFLOG.c.old_hash.is_not(None),
                                       REFLOG.c.reason.not_in(_FORWARD))
                                .order_by(REFLOG.c.id.desc())).all()
        seen = {h.hash for h, _ in roots}
        for r in rows:
            if r.old_hash not in seen:
                seen.add(r.old_hash)
                roots.append((Head(r.ref, RefType(r.ref_type), r.old_hash), Holding.EARLIER))
        return roots

    def _reached(self, content_id: str, roots: list[tuple[Head, Holding]]) -> list[Held]:
        """Every commit reachable from ``roots`` that puts the object
        (store.indexed_history.reached_puts, from many heads at once): a
        posting is reached when it is on a tip's first-parent chain, and a
        reached merge adds its other parents as tips (a merge that brings
        the object in has a posting of its own, store.changes)."""
        reader = self.store.reader
        tips: dict[str, tuple[Ancestry, Head, Holding]] = {}
        top = 0
        for head, holding in roots:
            tip = self._tip(head.hash)
            if tip is not None and head.hash not in tips:
                tips[head.hash] = (tip, head, holding)
                top = max(top, self._generation(head.hash))
        out: list[Held] = []
        for p in self.store.changes.postings(id_term(content_id), top):
            by = next(((head, holding) for tip, head, holding in list(tips.values())
                       if self._is_on(p, tip)), None)
            if by is None:
                continue
            try:
                rec = reader.commit(p.hash)
            except CommitNotFoundError:
                continue  # swept by a gc meanwhile
            for parent in rec.parents[1:]:
                if parent not in tips and (t := self._tip(parent)) is not None:
                    tips[parent] = (t, *by)
            if p.kind == "P":
                out += self._puts(content_id, p.hash, by[0].name, by[1])
        return out

    # -- shared ------------------------------------------------------------------------------
    def _generation(self, h: str) -> int:
        try:
            return self.store.reader.commit_light(h).generation
        except CommitNotFoundError:
            return -1

    def _tip(self, h: str) -> Ancestry | None:
        return self.store.changes.ancestry([h]).get(h)

    def _is_on(self, p: Posting, tip: Ancestry) -> bool:
        if p.depth > tip.depth or p.created_us > tip.created_us:
            return False
        found = self._chain.get((p.hash, tip.hash))
        if found is None:
            found = self.store.changes.on_chain(p, tip)
            self._chain.put((p.hash, tip.hash), found)
        return found

    def _puts(self, content_id: str, h: str, ref: str, holding: Holding) -> list[Held]:
        try:
            rec = self.store.reader.commit(h)
        except CommitNotFoundError:
            return []
        return [Held(ref, holding, h, op.key, op.entry) for op in rec.operations
                if op.kind is OpKind.PUT and op.entry is not None
                and op.entry.content_id == content_id]
