"""A commit's key state: a materialized index root plus a delta.

Nessie's incremental index: a commit's keys are the tree under the last
materialized root (``base``) plus the changes made since (``delta``). Reads
look in the delta first, then in the tree. Only when the delta grows past
DELTA_LIMIT keys, or DEPTH_LIMIT commits, does a commit rewrite the index
paths (once, for all of them) and start an empty delta. So an ordinary commit
or merge writes one small row whatever the size of the tree.

The delta itself is not stored: a commit's row records its ``depth``, the
number of commits since the materialization, and the delta is the fold of
those commits' operations (each commit's operations are its changes against
its first parent). A cold read loads at most DEPTH_LIMIT small rows in one
query, plus one node per tree level: never the log.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from core.commits import IndexEntry
from store.index import KeyIndex
from store.nodes import Node, Ref, ref_hash

DELTA_LIMIT = 64
DEPTH_LIMIT = 64
SMALL_LOOKUP = 4

Delta = dict[str, IndexEntry | None]  # None: deleted since the base


@dataclass(frozen=True, slots=True)
class IndexState:
    base: Ref = None
    delta: Delta = field(default_factory=dict)


class StateIndex:
    """KeyIndex operations on (base, delta) states."""

    def __init__(self, index: KeyIndex) -> None:
        self.index = index

    def get(self, st: IndexState, key: str) -> IndexEntry | None:
        if key in st.delta:
            return st.delta[key]
        return self.index.get(st.base, key)

    def get_many(self, st: IndexState, keys: Iterable[str]) -> dict[str, IndexEntry | None]:
        wanted = set(keys)
        out = {k: st.delta[k] for k in wanted if k in st.delta}
        rest = [k for k in wanted if k not in st.delta]
        if len(rest) > SMALL_LOOKUP:
            out.update(self.index.get_many(st.base, rest))
        else:  # a commit's usual handful: walking each path beats batching them
            for k in rest:
                out[k] = self.index.get(st.base, k)
        return out

    def items(self, st: IndexState, start: str | None = None,
              stop: str | None = None) -> Iterator[tuple[str, IndexEntry]]:
        """Live entries with start <= key < stop, in key order."""
        pending = sorted(k for k in st.delta
                         if (start is None or k >= start) and (stop is None or k < stop))
        overlay = ((k, 0, st.delta[k]) for k in pending)
        tree = ((k, 1, e) for k, e in self.index.items(st.base, start, stop))
        last = None
        for k, _, e in heapq.merge(overlay, tree, key=lambda t: (t[0], t[1])):
            if k == last:
                continue  # the delta's value came first and wins
            last = k
            if e is not None:
                yield k, e

    def diff(self, a: IndexState, b: IndexState,
             ) -> list[tuple[str, IndexEntry | None, IndexEntry | None]]:
        known: dict[str, tuple[IndexEntry | None, IndexEntry | None]] = {}
        if ref_hash(a.base) != ref_hash(b.base):
            known = {k: (x, y) for k, x, y in self.index.diff(a.base, b.base)}
        keys = set(known) | a.delta.keys() | b.delta.keys()
        need_a = [k for k in keys if k not in a.delta and k not in known]
        need_b = [k for k in keys if k not in b.delta and k not in known]
        base_a = self.index.get_many(a.base, need_a) if need_a else {}
        base_b = self.index.get_many(b.base, need_b) if need_b else {}
        out = []
        for k in keys:
            va = a.delta[k] if k in a.delta else known[k][0] if k in known else base_a[k]
            vb = b.delta[k] if k in b.delta else known[k][1] if k in known else base_b[k]
            if va != vb:
                out.append((k, va, vb))
        out.sort(key=lambda t: t[0])
        return out

    def apply(self, st: IndexState, changes: Delta, depth: int,
              ) -> tuple[IndexState, list[Node], int]:
        """The state after ``changes`` on a commit of ``depth``: the new state,
        the index nodes that must be written (none unless the delta spills
        into the tree) and the new commit's depth."""
        delta = {**st.delta, **changes}
        if not delta:
            return IndexState(st.base, {}), [], 0
        if len(delta) <= DELTA_LIMIT and depth < DEPTH_LIMIT:
            return IndexState(st.base, delta), [], depth + 1
        root, nodes = self.index.finalize(self.index.mutate(st.base, delta))
        return IndexState(root, {}), nodes, 0
