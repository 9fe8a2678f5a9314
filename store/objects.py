"""Loading immutable objects (index nodes, content values, commits), with
in-process caches. Being content-addressed, a cached object never goes stale,
so any number of API processes may cache independently.

The index nodes and content values a commit creates are stored together in
that commit's row (its *pack*): one row per commit keeps the write path as
short as a raw insert. An object's location is the first ``LOC_LEN`` hex
characters of the hash of the commit whose pack holds it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import Select, and_, bindparam, or_, select, text

from core.commits import IndexEntry
from core.content import Content, parse_content_json
from core.lru import LRU
from core.missing import no_such_commit
from store.commit_records import COMMIT_COLUMNS, LIGHT_COLUMNS, CommitRecord, record_from_row
from store.db import Database
from store.nodes import Node, StoredRef, decode_node, encode_node, walk_parts
from store.schema import COMMITS, PACKS
from store.state import IndexState

LOC_LEN = 16
# A commit with up to PACK_OBJECTS new objects (one index path and its values:
# the usual case) keeps them all in its own row. A bigger one (bulk loads,
# wide merges) stores them BULK_PACK_OBJECTS to a row, so that a cold read of
# one node drags in few neighbours.
PACK_OBJECTS = 16
BULK_PACK_OBJECTS = 4
_OBJ = "\x1c"  # between objects in a pack; never inside JSON text or a node


# Built once: a statement object caches its compiled form.
_SELECT_COMMIT = select(*COMMIT_COLUMNS).where(COMMITS.c.hash == bindparam("h"))
_SELECT_LIGHT = select(*LIGHT_COLUMNS).where(COMMITS.c.hash == bindparam("h"))
_SELECT_LIGHT_MANY = select(*LIGHT_COLUMNS).where(
    COMMITS.c.hash.in_(bindparam("hashes", expanding=True)))
_SELECT_CHAIN = text(
    f"WITH RECURSIVE chain AS (SELECT {', '.join(c.name for c in COMMIT_COLUMNS)} "
    "FROM commits WHERE hash = :h UNION ALL SELECT "
    f"{', '.join('c.' + c.name for c in COMMIT_COLUMNS)} FROM commits c "
    "JOIN chain ON c.hash = chain.parent WHERE chain.depth > 1) SELECT * FROM chain"
).columns(*COMMIT_COLUMNS)
_SELECT_OVERFLOW = select(PACKS.c.loc, PACKS.c.data).where(
    PACKS.c.loc.in_(bindparam("locs", expanding=True)))


def loc_of(commit_hash: str) -> str:
    return commit_hash[:LOC_LEN]


_PACK_QUERIES: dict[int, Select[str, bytes]] = {}
_PACK_QUERY_MAX = 32


def _select_packs(n: int) -> Select[str, bytes]:
    """Packs of commits by location: a location is a prefix of the commit hash,
    so each one is a range on the primary key (no index of its own to keep)."""
    q = _PACK_QUERIES.get(n)
    if q is None:
        q = cast("Select[str, bytes]", select(COMMITS.c.hash, COMMITS.c.pack).where(or_(*(
            and_(COMMITS.c.hash >= bindparam(f"lo{i}"), COMMITS.c.hash < bindparam(f"hi{i}"))
            for i in range(n)))))
        _PACK_QUERIES[n] = q
    return q


def plan_packs(nodes: list[Node], contents: dict[str, bytes], base: str,
               ) -> tuple[dict[str, str], list[tuple[str, list[Node], list[str]]]]:
    """Group a commit's new objects into packs (see PACK_OBJECTS).

    The first pack is located by the commit itself (``base``), the others as
    ``base.k``. Returns the location of every object and the packs.
    """
    locs: dict[str, str] = {}
    if len(nodes) + len(contents) <= PACK_OBJECTS:  # the usual commit: one pack
        locs.update(dict.fromkeys(contents, base))
        locs.update((_hash(n), base) for n in nodes)
        return locs, [(base, nodes, list(contents))] if nodes or contents else []
    objs: list[Node | str] = [*nodes, *contents]
    size = PACK_OBJECTS if len(objs) <= PACK_OBJECTS else BULK_PACK_OBJECTS
    packs = []
    for k, i in enumerate(range(0, len(objs), size)):
        loc = base if k == 0 else f"{base}.{k:x}"
        chunk = objs[i:i + size]
        pack_nodes = [o for o in chunk if isinstance(o, Node)]
        pack_contents = [o for o in chunk if isinstance(o, str)]
        locs.update((_hash(n), loc) for n in pack_nodes)
        locs.update((h, loc) for h in pack_contents)
        packs.append((loc, pack_nodes, pack_contents))
    return locs, packs


def _hash(n: Node) -> str:
    assert n.hash is not None  # finalized before it is packed
    return n.hash


def encode_pack(loc: str, nodes: list[Node], contents: dict[str, bytes]) -> bytes:
    parts = [f"n{n.hash}{encode_node(n, loc)}" for n in nodes]
    parts += [f"c{h}{data.decode()}" for h, data in contents.items()]
    return _OBJ.join(parts).encode()


# How a byte budget is shared among the reader's caches (they hold what a
# read needs most: index nodes, then pack objects and values as text).
BUDGET_SHARES = {"nodes": 0.30, "raw": 0.20, "content_text": 0.20, "commits": 0.20,
                 "contents": 0.10}


class ObjectReader:
    def __init__(self, db: Database, node_cache_size: int = 20_000,
                 commit_cache_size: int = 20_000, content_cache_size: int = 20_000,
                 content_text_cache_size: int = 250_000,
                 max_bytes: int | None = None) -> None:
        """``max_bytes``: what the caches may hold together (estimated; see
        BUDGET_SHARES), besides their entry counts."""
        self.db = db

        def share(name: str) -> int | None:
            return int(max_bytes * BUDGET_SHARES[name]) if max_bytes is not None else None

        # Content values as JSON text: a few hundred bytes each, so a server
        # keeps a whole catalog's values (250k ≈ 100 MB) and parses on demand.
        self.content_text: LRU[str, str] = LRU(content_text_cache_size, share("content_text"),
                                               _text_size)
        self.nodes: LRU[str, Node] = LRU(node_cache_size, share("nodes"), _node_size)
        # Undecoded objects of loaded packs: (kind, body, loc) by hash. A pack
        # is fetched whole but its objects are decoded only when asked for.
        self.raw: LRU[str, tuple[str, str, str]] = LRU(node_cache_size * 2, share("raw"),
                                                       _raw_size)
        self.commits: LRU[str, CommitRecord] = LRU(commit_cache_size, share("commits"),
                                                   _commit_size)
        self.contents: LRU[str, Content] = LRU(content_cache_size, share("contents"),
                                               _content_size)

    def caches(self) -> dict[str, LRU[str, Any]]:
        """The caches by name (for /metrics)."""
        return {"nodes": self.nodes, "raw": self.raw, "content_text": self.content_text,
                "commits": self.commits, "contents": self.contents}

    def clear_caches(self) -> None:
        self.nodes.clear()
        self.raw.clear()
        self.content_text.clear()
        self.commits.clear()
        self.contents.clear()

    # -- nodes (NodeSource) ----------------------------------------------------
    def load_node(self, ref: StoredRef) -> Node:
        n = self.nodes.get(ref[0])
        if n is None:
            raw = self.raw.get(ref[0])
            if raw is None:
                self._load_packs({ref[1]} if ref[1] else set())
                raw = self.raw.get(ref[0])
                if raw is None:
                    raise LookupError(f"index node {ref[0]} is missing from pack {ref[1]}")
            n = decode_node(ref[0], raw[1], raw[2])
            self.nodes.put(ref[0], n)
        return n

    def walk_parts(self, ref: StoredRef,
                   ) -> tuple[list[str], list[str | None] | None, list[StoredRef], str]:
        """A node for a walk that visits each node once (gc's mark), as
        nodes.walk_parts gives it plus the pack holding it: not decoded into
        a Node nor kept, so the walk pays only for what it reads."""
        n = self.nodes.get(ref[0])
        if n is None:
            raw = self.raw.get(ref[0])
            if raw is not None:
                self.raw.pop(ref[0])  # read once: its memory is reused at once
                idents, locs, kids = walk_parts(raw[1], raw[2])
                return idents, locs, kids, raw[2]
            n = self.load_node(ref)
        kids = [k for k in n.kids if isinstance(k, tuple)]
        return n.idents, n.locs, kids, n.loc or ref[1] or ""

    def prefetch_nodes(self, refs: Iterable[StoredRef]) -> None:
        self._load_packs({loc for h, loc in refs
                          if loc and h not in self.nodes and h not in self.raw})

    def remember_nodes(self, nodes: Iterable[Node]) -> None:
        for n in nodes:
            if n.hash is not None:
                self.nodes.put(n.hash, n)

    def _load_packs(self, locs: set[str], keep: dict[str, str] | None = None) -> None:
        """Fetch packs into the caches; ``keep`` collects the texts of the
        values it names as they are unpacked (a byte-bounded cache may have
        let go of some by the time a large batch is unpacked)."""
        if not locs:
            return
        in_commits = [loc for loc in locs if "." not in loc]
        overflow = [loc for loc in locs if "." in loc]
        with self.db.read() as conn:
            for i in range(0, len(in_commits), _PACK_QUERY_MAX):
                chunk = in_commits[i:i + _PACK_QUERY_MAX]
                params: dict[str, str] = {}
                for j, loc in enumerate(chunk):
                    params[f"lo{j}"] = loc
                    params[f"hi{j}"] = loc + "g"  # past every hex digit
                for hash_, pack in conn.execute(_select_packs(len(chunk)), params):
                    if pack:
                        self._unpack(loc_of(hash_), bytes(pack).decode(), keep)
            if overflow:
                for loc, pack in conn.execute(_SELECT_OVERFLOW, {"locs": overflow}):
                    self._unpack(loc, bytes(pack).decode(), keep)

    def _unpack(self, loc: str, pack: str, keep: dict[str, str] | None = None) -> None:
        for obj in pack.split(_OBJ):
            if obj[0] == "c":
                self.content_text.put(obj[1:65], obj[65:])
                if keep is not None and obj[1:65] in keep:
                    keep[obj[1:65]] = obj[65:]
            else:
                self.raw.put(obj[1:65], (obj[0], obj[65:], loc))

    # -- content values ----------------------------------------------------------
    def stored_texts(self, entries: Iterable[IndexEntry]) -> dict[str, str]:
        """The JSON text of values as their packs hold it, by value hash (the
        ones found; a missing value is simply absent)."""
        entries = list(entries)
        out = {e.value_hash: t for e in entries
               if (t := self.content_text.get(e.value_hash)) is not None}
        missing = [e for e in entries if e.value_hash not in out]
        keep = dict.fromkeys((e.value_hash for e in missing), "")
        self._load_packs({e.loc for e in missing if e.loc}, keep)
        out.update((h, t) for h, t in keep.items() if t)
        return out

    def load_contents(self, entries: Iterable[IndexEntry]) -> dict[str, Content]:
        entries = list(entries)
        texts = self.stored_texts(e for e in entries if e.value_hash not in self.contents)
        out: dict[str, Content] = {}
        for e in entries:
            c = self.contents.get(e.value_hash)
            if c is None:
                text = texts.get(e.value_hash) or self.stored_texts([e]).get(e.value_hash)
                if text is None:
                    raise LookupError(f"content {e.value_hash} is missing from pack {e.loc}")
                c = parse_content_json(text)
                self.contents.put(e.value_hash, c)
            out[e.value_hash] = c
        return out

    def remember_contents(self, contents: dict[str, tuple[Content, bytes]]) -> None:
        for h, (c, data) in contents.items():
            self.contents.put(h, c)
            self.content_text.put(h, data.decode())

    # -- commits -----------------------------------------------------------------
    def commit(self, hash_: str) -> CommitRecord:
        rec = self.commits.get(hash_)
        if rec is not None:
            return rec
        with self.db.read() as conn:
            row = conn.execute(_SELECT_COMMIT, {"h": hash_}).first()
        if row is None:
            raise no_such_commit(hash_)
        rec = record_from_row(row)
        self.commits.put(hash_, rec)
        return rec

    def commit_light(self, hash_: str) -> CommitRecord:
        """The commit, cached whole if it is, else read without its operations."""
        rec = self.commits.get(hash_)
        if rec is not None:
            return rec
        with self.db.read() as conn:
            row = conn.execute(_SELECT_LIGHT, {"h": hash_}).first()
        if row is None:
            raise no_such_commit(hash_)
        return record_from_row(row)

    def commits_light(self, hashes: Iterable[str]) -> dict[str, CommitRecord]:
        """Many commits in one query, without their operations (cached whole
        ones as they are); a missing hash is left out."""
        out: dict[str, CommitRecord] = {}
        wanted = []
        for h in dict.fromkeys(hashes):
            rec = self.commits.get(h)
            if rec is not None:
                out[h] = rec
            else:
                wanted.append(h)
        for i in range(0, len(wanted), 500):
            with self.db.read() as conn:
                for row in conn.execute(_SELECT_LIGHT_MANY, {"hashes": wanted[i:i + 500]}):
                    out[row.hash] = record_from_row(row)
        return out

    def remember_commit(self, rec: CommitRecord) -> None:
        if not rec.light:
            self.commits.put(rec.hash, rec)

    def state(self, rec: CommitRecord) -> IndexState:
        """The keys at ``rec``: its root plus the fold of the operations of the
        commits since that root was materialized (see store.state)."""
        if rec.state is not None:
            return rec.state
        chain = [rec]
        cur = rec
        loaded: dict[str, CommitRecord] = {}
        while True:  # walk first parents while their state is unknown
            h = cur.parents[0]
            parent = loaded.get(h) or self.commits.get(h)
            if parent is None:
                loaded = self._load_chain(h)
                parent = loaded.get(h)
                if parent is None:
                    raise no_such_commit(h)
            if parent.state is not None:
                break
            chain.append(parent)
            cur = parent
        st = parent.state
        for c in reversed(chain):
            st = IndexState(c.root, {**st.delta, **c.changes()})
            c.state = st
        return st

    def _load_chain(self, hash_: str) -> dict[str, CommitRecord]:
        """One query for a commit and the first parents its state depends on."""
        with self.db.read() as conn:
            rows = conn.execute(_SELECT_CHAIN, {"h": hash_}).all()
        out = {}
        for row in rows:
            rec = self.commits.get(row.hash)
            if rec is None:
                rec = record_from_row(row)
                self.commits.put(row.hash, rec)
            out[row.hash] = rec
        return out


# Estimates of what a cached object holds in memory, in bytes: CPython's
# overhead per object and per string, plus the text it keeps. Rough, and
# deliberately on the high side (bench/scale_bench.py checks RSS against them).
def _text_size(text: str) -> int:
    return 80 + len(text)


def _raw_size(raw: tuple[str, str, str]) -> int:
    return 200 + len(raw[1]) + len(raw[2])


def _node_size(n: Node) -> int:
    return 300 + sum(200 + len(k) for k in n.keys)


def _commit_size(rec: CommitRecord) -> int:
    # Operations decoded later hold several times their text: count them so.
    return 800 + len(rec.message) + 4 * len(rec._ops_raw or "") + 250 * len(
        rec._operations or ())


def _content_size(_: Content) -> int:
    return 2_000
