"""Loading immutable objects (index nodes, content values, commits), with
in-process caches. Being content-addressed, a cached object never goes stale,
so any number of API processes may cache independently."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlalchemy import select

from core.commits import CommitOperation, IndexEntry, OpKind
from core.content import Content, ContentType, parse_content_json
from core.errors import CommitNotFoundError
from core.instants import from_micros
from core.keys import ContentKey
from store.db import Database
from store.index import Node, decode_node
from store.schema import COMMITS, OBJECTS

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._d: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            v = self._d.get(key)
            if v is not None:
                self._d.move_to_end(key)
            return v

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.capacity:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """A commit row as the store's internals use it."""

    hash: str
    parents: tuple[str, ...]
    generation: int
    created_us: int
    author: str | None
    committer: str | None
    message: str
    properties: dict[str, str]
    operations: tuple[CommitOperation, ...]
    root: str | None

    def to_commit(self):  # noqa: ANN201 - core.commits.Commit
        from core.commits import Commit

        return Commit(self.hash, self.parents, self.message, self.author, self.committer,
                      from_micros(self.created_us), dict(self.properties), self.operations)


def encode_operations(ops: Iterable[CommitOperation]) -> str:
    out = []
    for op in ops:
        item: list[object] = [op.kind.value, op.key.internal]
        if op.entry is not None:
            item += [op.entry.type.value, op.entry.content_id, op.entry.value_hash]
        out.append(item)
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)


def decode_operations(raw: str) -> tuple[CommitOperation, ...]:
    ops = []
    for item in json.loads(raw):
        entry = (IndexEntry(ContentType(item[2]), item[3], item[4]) if len(item) > 2 else None)
        ops.append(CommitOperation(OpKind(item[0]), ContentKey.from_internal(item[1]), entry))
    return tuple(ops)


def record_from_row(row: object) -> CommitRecord:
    parents = (row.parent,) if row.parent else ()  # type: ignore[attr-defined]
    if row.merge_parents:  # type: ignore[attr-defined]
        parents += tuple(json.loads(row.merge_parents))  # type: ignore[attr-defined]
    return CommitRecord(
        row.hash, parents, row.generation, row.created_us,  # type: ignore[attr-defined]
        row.author, row.committer, row.message,  # type: ignore[attr-defined]
        json.loads(row.properties), decode_operations(row.operations),  # type: ignore[attr-defined]
        row.root)  # type: ignore[attr-defined]


class ObjectReader:
    def __init__(self, db: Database, node_cache_size: int = 20_000,
                 commit_cache_size: int = 20_000, content_cache_size: int = 20_000) -> None:
        self.db = db
        self.nodes: LRU[str, Node] = LRU(node_cache_size)
        self.commits: LRU[str, CommitRecord] = LRU(commit_cache_size)
        self.contents: LRU[str, Content] = LRU(content_cache_size)

    def clear_caches(self) -> None:
        self.nodes.clear()
        self.commits.clear()
        self.contents.clear()

    # -- nodes (NodeSource) ----------------------------------------------------
    def load_node(self, hash_: str) -> Node:
        n = self.nodes.get(hash_)
        if n is None:
            self.prefetch_nodes([hash_])
            n = self.nodes.get(hash_)
            if n is None:
                raise LookupError(f"index node {hash_} is missing from the object store")
        return n

    def prefetch_nodes(self, hashes: Iterable[str]) -> None:
        missing = [h for h in set(hashes) if self.nodes.get(h) is None]
        if not missing:
            return
        with self.db.read() as conn:
            rows = conn.execute(select(OBJECTS.c.hash, OBJECTS.c.data)
                                .where(OBJECTS.c.hash.in_(missing))).all()
        for h, data in rows:
            self.nodes.put(h, decode_node(h, bytes(data)))

    def remember_nodes(self, nodes: Iterable[Node]) -> None:
        for n in nodes:
            if n.hash is not None:
                self.nodes.put(n.hash, n)

    # -- content values ----------------------------------------------------------
    def load_contents(self, hashes: Iterable[str]) -> dict[str, Content]:
        out: dict[str, Content] = {}
        missing = []
        for h in set(hashes):
            c = self.contents.get(h)
            if c is None:
                missing.append(h)
            else:
                out[h] = c
        if missing:
            with self.db.read() as conn:
                rows = conn.execute(select(OBJECTS.c.hash, OBJECTS.c.data)
                                    .where(OBJECTS.c.hash.in_(missing))).all()
            for h, data in rows:
                c = parse_content_json(bytes(data))
                self.contents.put(h, c)
                out[h] = c
        return out

    # -- commits -----------------------------------------------------------------
    def commit(self, hash_: str) -> CommitRecord:
        rec = self.commits.get(hash_)
        if rec is not None:
            return rec
        with self.db.read() as conn:
            row = conn.execute(select(COMMITS).where(COMMITS.c.hash == hash_)).first()
        if row is None:
            raise CommitNotFoundError(f"commit {hash_} does not exist")
        rec = record_from_row(row)
        self.commits.put(hash_, rec)
        return rec

    def remember_commit(self, rec: CommitRecord) -> None:
        self.commits.put(rec.hash, rec)
