"""The persistent key index: a Merkle search tree (MST).

Every key gets a height from its hash (leading zero bits // FANOUT_BITS, so
about one key in 2**FANOUT_BITS climbs a level). A node at level L holds the
keys of height L in its key range, with subtrees of level L-1 between them.
The shape depends only on the set of keys, never on the order of the edits
that made it, so equal maps have equal root hashes. Hence:

* a lookup reads one node per level, O(log n), however long the history;
* an edit rewrites one path of nodes, O(log n), sharing everything else;
* a diff skips every subtree whose hash matches, descending only where the
  two maps differ.

Nodes are immutable. New ones live in memory until ``finalize`` hashes them
bottom-up; the store then writes them into the pack of the commit that made
them. A stored node is referred to as (hash, loc): its identity and the pack
(commit) that holds it. Identity hashes leave locations out, so the same map
has the same root hash wherever its nodes happen to be stored.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator

from core.commits import IndexEntry
from store.nodes import Node, NodeSource, Ref, StoredRef, key_height, node_identity, ref_hash


class KeyIndex:
    """Operations on index roots; keys are ContentKey.internal strings."""

    def __init__(self, source: NodeSource) -> None:
        self._src = source

    def _node(self, ref: Node | StoredRef) -> Node:
        return ref if isinstance(ref, Node) else self._src.load_node(ref)

    # -- reads -----------------------------------------------------------------
    def get(self, root: Ref, key: str) -> IndexEntry | None:
        ref = root
        load = self._src.load_node
        while ref is not None:
            n = ref if ref.__class__ is Node else load(ref)  # type: ignore[arg-type]
            keys = n.keys
            i = bisect_left(keys, key)
            if i < len(keys) and keys[i] == key:
                return n.entry(i)
            ref = n.kids[i]
        return None

    def get_many(self, root: Ref, keys: Iterable[str]) -> dict[str, IndexEntry | None]:
        """Look up many keys, one batched node fetch per tree level."""
        out: dict[str, IndexEntry | None] = {}
        frontier: list[tuple[Ref, list[str]]] = [(root, sorted(set(keys)))]
        while frontier:
            self._src.prefetch_nodes(r for r, _ in frontier if isinstance(r, tuple))
            nxt: list[tuple[Ref, list[str]]] = []
            for ref, ks in frontier:
                if ref is None:
                    out.update(dict.fromkeys(ks))
                    continue
                n = self._node(ref)
                groups: dict[int, list[str]] = {}
                for k in ks:
                    i = bisect_left(n.keys, k)
                    if i < len(n.keys) and n.keys[i] == k:
                        out[k] = n.entry(i)
                    else:
                        groups.setdefault(i, []).append(k)
                nxt.extend((n.kids[i], g) for i, g in groups.items())
            frontier = nxt
        return out

    def items(self, root: Ref, start: str | None = None,
              stop: str | None = None) -> Iterator[tuple[str, IndexEntry]]:
        """Entries with start <= key < stop, in key order."""
        if root is None:
            return
        n = self._node(root)
        i = bisect_left(n.keys, start) if start is not None else 0
        for j in range(i, len(n.keys) + 1):
            kid = n.kids[j]
            if kid is not None:
                yield from self.items(kid, start if j == i else None, stop)
            if j == len(n.keys):
                return
            k = n.keys[j]
            if stop is not None and k >= stop:
                return
            yield k, n.entry(j)

    # -- edits -----------------------------------------------------------------
    def mutate(self, root: Ref, changes: dict[str, IndexEntry | None]) -> Ref:
        for key in sorted(changes):
            entry = changes[key]
            root = self.put(root, key, entry) if entry is not None else self.delete(root, key)
        return root

    def put(self, root: Ref, key: str, entry: IndexEntry) -> Ref:
        h = key_height(key)
        ident, loc = entry.identity, entry.loc
        if root is None:
            return _leafish(key, ident, loc, h)
        r = self._node(root)
        if h > r.level:
            left, right = self._split(r, key)
            return Node(h, [key], [ident], [loc], [_lift(left, r.level, h - 1),
                                                   _lift(right, r.level, h - 1)])
        return self._put(r, key, ident, loc, h)

    def _put(self, n: Node, key: str, ident: str, loc: str | None, h: int) -> Node:
        i = bisect_left(n.keys, key)
        if i < len(n.keys) and n.keys[i] == key:
            if n.idents[i] == ident:
                return n
            idents, locs = n.idents.copy(), n.locs.copy()
            idents[i], locs[i] = ident, loc
            return Node(n.level, n.keys, idents, locs, n.kids)
        if h == n.level:
            left, right = self._split(n.kids[i], key)
            return Node(n.level, [*n.keys[:i], key, *n.keys[i:]],
                        [*n.idents[:i], ident, *n.idents[i:]], [*n.locs[:i], loc, *n.locs[i:]],
                        [*n.kids[:i], left, right, *n.kids[i + 1:]])
        kid = n.kids[i]
        if kid is None:
            new_kid: Ref = _lift(_leafish(key, ident, loc, h), h, n.level - 1)
        else:
            old = self._node(kid)
            new_kid = self._put(old, key, ident, loc, h)
            if new_kid is old:
                return n
        kids = n.kids.copy()
        kids[i] = new_kid
        return Node(n.level, n.keys, n.idents, n.locs, kids)

    def _split(self, ref: Ref, key: str) -> tuple[Ref, Ref]:
        """Split a subtree at a key it does not hold: (keys < key, keys > key)."""
        if ref is None:
            return None, None
        n = self._node(ref)
        i = bisect_left(n.keys, key)
        left, right = self._split(n.kids[i], key)
        return (_norm(Node(n.level, n.keys[:i], n.idents[:i], n.locs[:i], [*n.kids[:i], left])),
                _norm(Node(n.level, n.keys[i:], n.idents[i:], n.locs[i:],
                           [right, *n.kids[i + 1:]])))

    def delete(self, root: Ref, key: str) -> Ref:
        if root is None:
            return None
        r = self._node(root)
        new = self._delete(r, key, key_height(key))
        if new is r:
            return root
        while new is not None and not new.keys:  # a root needs a key of its own
            new = self._node(new.kids[0]) if new.kids[0] is not None else None
        return new

    def _delete(self, n: Node, key: str, h: int) -> Node | None:
        i = bisect_left(n.keys, key)
        if i < len(n.keys) and n.keys[i] == key:
            merged = self._merge(n.kids[i], n.kids[i + 1])
            return _norm(Node(n.level, n.keys[:i] + n.keys[i + 1:],
                              n.idents[:i] + n.idents[i + 1:], n.locs[:i] + n.locs[i + 1:],
                              [*n.kids[:i], merged, *n.kids[i + 2:]]))
        kid = n.kids[i]
        if h >= n.level or kid is None:
            return n  # absent
        k = self._node(kid)
        new_kid = self._delete(k, key, h)
        if new_kid is k:
            return n
        kids = n.kids.copy()
        kids[i] = new_kid
        return _norm(Node(n.level, n.keys, n.idents, n.locs, kids))

    def _merge(self, a: Ref, b: Ref) -> Ref:
        """Join two adjacent subtrees of one level (all of a < all of b)."""
        if a is None:
            return b
        if b is None:
            return a
        na, nb = self._node(a), self._node(b)
        mid = self._merge(na.kids[-1], nb.kids[0])
        return Node(na.level, na.keys + nb.keys, na.idents + nb.idents, na.locs + nb.locs,
                    [*na.kids[:-1], mid, *nb.kids[1:]])

    def finalize(self, root: Ref) -> tuple[StoredRef | None, list[Node]]:
        """Hash new nodes bottom-up. Returns the root and the new nodes, whose
        references to each other are (hash, None) until ``stamp`` gives them
        the location of the pack they are written to."""
        new: list[Node] = []

        def walk(ref: Node) -> str:
            if ref.hash is None:
                kids: list[StoredRef | None] = [
                    k if k is None or isinstance(k, tuple) else (walk(k), k.loc)
                    for k in ref.kids]
                ref.hash = node_identity(ref.level, ref.keys, ref.idents,
                                         [None if k is None else k[0] for k in kids])
                ref.kids = list(kids)
                new.append(ref)
            return ref.hash

        if root is None or isinstance(root, tuple):
            return root, new
        h = walk(root)
        return (h, root.loc), new

    # -- diff ------------------------------------------------------------------
    def diff(self, a: Ref, b: Ref) -> list[tuple[str, IndexEntry | None, IndexEntry | None]]:
        """Keys whose entries differ between two roots, sorted by key.

        Subtrees over the same key range are compared level by level (one
        batched fetch per level); equal hashes are skipped whole. Where the
        two shapes do not line up, a merge-walk takes over for that range.
        """
        out: list[tuple[str, IndexEntry | None, IndexEntry | None]] = []
        frontier: list[tuple[Ref, Ref]] = [(a, b)]
        while frontier:
            self._src.prefetch_nodes(
                r for pair in frontier for r in pair if isinstance(r, tuple))
            nxt: list[tuple[Ref, Ref]] = []
            for x, y in frontier:
                hx = ref_hash(x)
                if hx is not None and hx == ref_hash(y):
                    continue
                nx = self._node(x) if x is not None else None
                ny = self._node(y) if y is not None else None
                if nx is not None and ny is not None and nx.level == ny.level \
                        and nx.keys == ny.keys:
                    if nx.idents != ny.idents:
                        for i, (ix, iy) in enumerate(zip(nx.idents, ny.idents, strict=True)):
                            if ix != iy:
                                out.append((nx.keys[i], nx.entry(i), ny.entry(i)))
                    # Tuple equality first (C speed): the same (hash, pack) is
                    # the same subtree; only else compare hashes alone.
                    nxt.extend([(kx, ky) for kx, ky in zip(nx.kids, ny.kids, strict=True)
                                if kx != ky and ref_hash(kx) != ref_hash(ky)])
                else:
                    out.extend(self._walk_diff(nx, ny))
            frontier = nxt
        out.sort(key=lambda t: t[0])
        return out

    def _walk_diff(self, a: Node | None, b: Node | None,
                   ) -> Iterator[tuple[str, IndexEntry | None, IndexEntry | None]]:
        # Two streams of (subtree | entry) in key order; a pair of subtrees
        # with one hash at the heads of both streams holds the same entries.
        sa: list[object] = [a] if a is not None else []
        sb: list[object] = [b] if b is not None else []
        while sa or sb:
            x = sa[-1] if sa else None
            y = sb[-1] if sb else None
            x_node = x is not None and not isinstance(x, _Item)
            y_node = y is not None and not isinstance(y, _Item)
            if x_node and y_node:
                if ref_hash(x) is not None and ref_hash(x) == ref_hash(y):  # type: ignore[arg-type]
                    sa.pop()
                    sb.pop()
                    continue
                nx, ny = self._node(x), self._node(y)  # type: ignore[arg-type]
                if nx.level >= ny.level:
                    _expand(sa, nx)
                if ny.level >= nx.level:
                    _expand(sb, ny)
            elif x_node:
                _expand(sa, self._node(x))  # type: ignore[arg-type]
            elif y_node:
                _expand(sb, self._node(y))  # type: ignore[arg-type]
            else:
                ex: tuple[str, IndexEntry] | None = x  # type: ignore[assignment]
                ey: tuple[str, IndexEntry] | None = y  # type: ignore[assignment]
                if ey is None or (ex is not None and ex[0] < ey[0]):
                    sa.pop()
                    yield ex[0], ex[1], None  # type: ignore[index]
                elif ex is None or ey[0] < ex[0]:
                    sb.pop()
                    yield ey[0], None, ey[1]
                else:
                    sa.pop()
                    sb.pop()
                    if ex[1] != ey[1]:
                        yield ex[0], ex[1], ey[1]


class _Item(tuple[str, "IndexEntry | None"]):
    """A (key, entry) in a diff stream, told apart from stored refs (tuples too)."""

    __slots__ = ()

    def __new__(cls, key: str, entry: IndexEntry) -> _Item:
        return super().__new__(cls, (key, entry))


def _expand(stack: list[object], n: Node) -> None:
    stack.pop()
    for i in range(len(n.keys), -1, -1):
        kid = n.kids[i]
        if kid is not None:
            stack.append(kid)
        if i > 0:
            stack.append(_Item(n.keys[i - 1], n.entry(i - 1)))


def _leafish(key: str, ident: str, loc: str | None, h: int) -> Node:
    return Node(h, [key], [ident], [loc], [None, None])


def _lift(ref: Ref, level: int, to_level: int) -> Ref:
    """Wrap a subtree of ``level`` in key-less nodes up to ``to_level``."""
    if ref is None:
        return None
    while level < to_level:
        level += 1
        ref = Node(level, [], [], [], [ref])
    return ref


def _norm(n: Node) -> Node | None:
    return None if not n.keys and n.kids[0] is None else n
