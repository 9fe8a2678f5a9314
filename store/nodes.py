"""Index nodes of the Merkle search tree (see store.index): their in-memory
form, identity hash, stored encoding, and the key heights that shape the tree.

A stored node is referred to as (hash, loc): its identity and the pack
(commit) that holds it. Identity hashes leave locations out, so the same map
has the same root hash wherever its nodes happen to be stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Protocol

from core.commits import IndexEntry

FANOUT_BITS = 5  # average node fan-out 32

# Field separators: keys and ids never hold characters below 0x20 (but the
# internal key separator 0x00), so these cannot occur inside a field.
_REC, _ITEM, _PART = "\x1e", "\x1f", "\x1d"

StoredRef = tuple[str, str | None]  # (node hash, loc of the pack holding it)


class Node:
    """An index node. Entries are kept as two parallel lists of strings, their
    identities (type, content id, value hash) and locations, so nodes compare
    and copy at C speed; ``IndexEntry`` objects are built only for callers."""

    __slots__ = ("hash", "idents", "keys", "kids", "level", "loc", "locs")

    def __init__(self, level: int, keys: list[str], idents: list[str],
                 locs: list[str | None], kids: list[Ref], hash_: str | None = None,
                 loc: str | None = None) -> None:
        self.level = level
        self.keys = keys
        self.idents = idents
        self.locs = locs
        self.kids = kids  # len(keys) + 1 subtrees; all None on level 0
        self.hash = hash_
        self.loc = loc  # the pack holding it; None until written

    def entry(self, i: int) -> IndexEntry:
        return IndexEntry.from_identity(self.idents[i], self.locs[i])


Ref = Node | StoredRef | None  # in-memory node, stored node, or empty


class NodeSource(Protocol):
    def load_node(self, ref: StoredRef) -> Node: ...

    def prefetch_nodes(self, refs: Iterable[StoredRef]) -> None: ...


def key_height(key: str) -> int:
    top = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    zeros = 64 - top.bit_length()
    return zeros // FANOUT_BITS


def ref_hash(ref: Ref) -> str | None:
    if ref is None:
        return None
    return ref.hash if isinstance(ref, Node) else ref[0]


def node_identity(level: int, keys: list[str], idents: list[str],
                  kid_hashes: list[str | None]) -> str:
    body = _REC.join((str(level), _ITEM.join(keys), _ITEM.join(idents),
                      _ITEM.join([h or "" for h in kid_hashes])))
    return hashlib.sha256(body.encode()).hexdigest()


def encode_node(node: Node, pack_loc: str) -> str:
    """A stored node; locations equal to the pack's own are written empty."""
    locs = _ITEM.join(["" if loc == pack_loc else loc for loc in node.locs])  # type: ignore[misc]
    kids = "" if node.level == 0 else _ITEM.join(
        "" if k is None else f"{k[0]}{_PART}{'' if k[1] == pack_loc else k[1]}"  # type: ignore[index]
        for k in node.kids)
    return _REC.join((str(node.level), _ITEM.join(node.keys), _ITEM.join(node.idents), locs,
                      kids))


def decode_node(hash_: str, body: str, pack_loc: str) -> Node:
    level_s, keys_s, idents_s, locs_s, kids_s = body.split(_REC)
    level = int(level_s)
    if keys_s:
        keys = keys_s.split(_ITEM)
        idents = idents_s.split(_ITEM)
        locs: list[str | None] = [loc or pack_loc for loc in locs_s.split(_ITEM)]
    else:
        keys, idents, locs = [], [], []
    if level == 0:
        kids: list[Ref] = [None] * (len(keys) + 1)
    else:
        kids = []
        for item in kids_s.split(_ITEM):
            if item:
                h, loc = item.split(_PART)
                kids.append((h, loc or pack_loc))
            else:
                kids.append(None)
    return Node(level, keys, idents, locs, kids, hash_, pack_loc)


def walk_parts(body: str, pack_loc: str,
               ) -> tuple[list[str], list[str | None] | None, list[StoredRef]]:
    """What a walk that reads each node once (gc's mark) needs of a stored
    node, without building it: its entries' identities, their locations
    (None: every one in the node's own pack, the common case, so no list is
    built per entry) and its stored children."""
    _level, _keys, idents_s, locs_s, kids_s = body.split(_REC)
    if not idents_s:
        idents: list[str] = []
        locs: list[str | None] | None = None
    else:
        idents = idents_s.split(_ITEM)
        locs = None if not locs_s.replace(_ITEM, "") else [
            loc or pack_loc for loc in locs_s.split(_ITEM)]
    kids: list[StoredRef] = []
    if kids_s:
        for item in kids_s.split(_ITEM):
            if item:
                h, loc = item.split(_PART)
                kids.append((h, loc or pack_loc))
    return idents, locs, kids


def value_hash_of(ident: str) -> str:
    return ident[ident.rindex(":") + 1:]


def stamp(nodes: Iterable[Node], locs: dict[str, str]) -> None:
    """Give freshly written nodes, and the new entries and children they point
    at, the locations of the packs they were written to (``locs`` by hash)."""
    for n in nodes:
        n.loc = locs[n.hash]  # type: ignore[index]
        n.locs = [loc if loc is not None else locs[value_hash_of(ident)]
                  for ident, loc in zip(n.idents, n.locs, strict=True)]
        n.kids = [(k[0], locs[k[0]]) if isinstance(k, tuple) and k[1] is None else k
                  for k in n.kids]
