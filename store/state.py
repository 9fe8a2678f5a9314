"""A commit's key state: a materialized index root plus a delta.

Nessie's incremental index: a commit carries, in its own row, the changes
made since the last time the key index was materialized (``delta``). Reads
look in the delta first, then in the tree under ``base``. Only when the delta
grows past DELTA_LIMIT keys does a commit rewrite the index paths (once, for
all of them) and start an empty delta. So an ordinary commit or merge writes
one small row whatever the size of the tree, and a lookup still reads the
commit row plus one node per tree level: never the log.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from core.commits import IndexEntry
from store.index import KeyIndex, Node, Ref, ref_hash

DELTA_LIMIT = 32

Delta = dict[str, IndexEntry | None]  # None: deleted since the base


@dataclass(frozen=True, slots=True)
class IndexState:
    base: Ref = None
    delta: Delta = field(default_factory=dict)


def encode_delta(delta: Delta) -> str | None:
    if not delta:
        return None
    return json.dumps([[k, e.identity if e else None, e.loc if e else None]
                       for k, e in sorted(delta.items())],
                      separators=(",", ":"), ensure_ascii=False)


def decode_delta(raw: str | None) -> Delta:
    if not raw:
        return {}
    return {k: IndexEntry.from_identity(ident, loc) if ident is not None else None
            for k, ident, loc in json.loads(raw)}


def delta_identity(delta: Delta) -> list[list[str | None]]:
    """What a commit hash covers of a delta: keys and values, not locations."""
    return [[k, e.identity if e else None] for k, e in sorted(delta.items())]


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
        if rest:
            out.update(self.index.get_many(st.base, rest))
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

    def apply(self, st: IndexState, changes: Delta) -> tuple[IndexState, list[Node]]:
        """The state after ``changes``, and the index nodes that must be written
        (none unless the delta spills into the tree)."""
        delta = {**st.delta, **changes}
        if len(delta) <= DELTA_LIMIT:
            return IndexState(st.base, delta), []
        root, nodes = self.index.finalize(self.index.mutate(st.base, delta))
        return IndexState(root, {}), nodes
