"""Turning a planned change into rows, and landing it on a branch.

A plan is computed against a head, then written in one transaction that
inserts the new immutable rows and moves the branch by compare-and-swap. The
first try is optimistic (plan outside any lock). If the branch moved, later
tries re-plan inside the write transaction with the ref row locked, so a busy
branch costs one extra round rather than a storm of retries — and nothing is
ever half-written: a failed swap rolls the whole transaction back.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from sqlalchemy import Connection

from core.commits import CommitMeta, CommitOperation, IndexEntry, OpKind, Reference, RefType
from core.errors import ReadOnlyReferenceError, RetryLimitError
from core.keys import ContentKey
from store.db import Database
from store.index import Node
from store.objects import CommitRecord, ObjectReader, encode_operations
from store.refs import Refs
from store.schema import COMMITS, OBJECTS

R = TypeVar("R")
LOCKED_ATTEMPTS = 3


@dataclass
class WriteSet(Generic[R]):
    result: R
    objects: list[dict[str, object]] = field(default_factory=list)
    commits: list[CommitRecord] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    reason: str = "commit"

    @property
    def new_head(self) -> str | None:
        return self.commits[-1].hash if self.commits else None


def make_commit(parents: list[CommitRecord], root: str | None, meta: CommitMeta,
                operations: list[CommitOperation], now_us: int,
                principal: str | None) -> CommitRecord:
    """A new commit on ``parents[0]``; its time never goes below its parent's."""
    created = max(now_us, parents[0].created_us + 1)
    committer = meta.committer or principal
    author = meta.author or committer
    ops_json = encode_operations(operations)
    body = [[p.hash for p in parents], root, created, author, committer, meta.message,
            sorted(meta.properties.items()), ops_json]
    digest = hashlib.sha256(json.dumps(body, separators=(",", ":"),
                                       ensure_ascii=False).encode()).hexdigest()
    return CommitRecord(digest, tuple(p.hash for p in parents),
                        1 + max(p.generation for p in parents), created, author, committer,
                        meta.message, dict(meta.properties), tuple(operations), root)


def operations_from(changes: dict[str, IndexEntry | None]) -> list[CommitOperation]:
    return [CommitOperation(OpKind.PUT if e is not None else OpKind.DELETE,
                            ContentKey.from_internal(k), e)
            for k, e in sorted(changes.items())]


def commit_row(rec: CommitRecord) -> dict[str, object]:
    return {
        "hash": rec.hash, "parent": rec.parents[0] if rec.parents else None,
        "merge_parents": json.dumps(list(rec.parents[1:])) if len(rec.parents) > 1 else None,
        "generation": rec.generation, "created_us": rec.created_us, "author": rec.author,
        "committer": rec.committer, "message": rec.message,
        "properties": json.dumps(rec.properties, sort_keys=True),
        "operations": encode_operations(rec.operations), "root": rec.root,
    }


class _Moved(Exception):
    """The branch head changed between planning and the swap."""


class BranchWriter:
    def __init__(self, db: Database, refs: Refs, reader: ObjectReader) -> None:
        self.db = db
        self.refs = refs
        self.reader = reader
        self._insert_objects = db.insert_ignore(OBJECTS)
        self._insert_commits = db.insert_ignore(COMMITS)

    def run(self, branch: str, plan: Callable[[Reference], WriteSet[R]],
            principal: str | None) -> R:
        head = self.refs.get(branch)
        _require_branch(head)
        ws = plan(head)
        if ws.new_head is None:
            return ws.result
        try:
            with self.db.write() as conn:
                self._apply(conn, head, ws, principal)
            self._remember(ws)
            return ws.result
        except _Moved:
            pass
        for _ in range(LOCKED_ATTEMPTS):
            try:
                with self.db.write() as conn:
                    head = self.refs.locked_head(conn, branch)
                    _require_branch(head)
                    ws = plan(head)
                    if ws.new_head is None:
                        return ws.result
                    self._apply(conn, head, ws, principal)
                self._remember(ws)
                return ws.result
            except _Moved:
                time.sleep(0.001)
        raise RetryLimitError(
            f"branch '{branch}' kept moving; gave up after {LOCKED_ATTEMPTS + 1} attempts")

    def _apply(self, conn: Connection, head: Reference, ws: WriteSet[R],
               principal: str | None) -> None:
        if ws.objects:
            conn.execute(self._insert_objects, ws.objects)
        conn.execute(self._insert_commits, [commit_row(c) for c in ws.commits])
        new = ws.new_head
        assert new is not None
        if not self.refs.cas(conn, head.name, head.hash, new):
            raise _Moved
        self.refs.journal(conn, head.name, RefType.BRANCH, head.hash, new,
                          ws.commits[-1].created_us, principal, ws.reason)

    def _remember(self, ws: WriteSet[R]) -> None:
        self.reader.remember_nodes(ws.nodes)
        for c in ws.commits:
            self.reader.remember_commit(c)


def _require_branch(ref: Reference) -> None:
    if ref.type is not RefType.BRANCH:
        raise ReadOnlyReferenceError(
            f"'{ref.name}' is a tag: commits, merges and transplants need a branch")
