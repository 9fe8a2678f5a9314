"""A commit as the store keeps it (``CommitRecord``): its row's columns,
its operations decoded only when asked for, and the column sets the reads
select (whole, light for log pages, a skeleton for fsck)."""

from __future__ import annotations

import json

from core.commits import Commit, CommitOperation, IndexEntry, OpKind
from core.content import ContentType
from core.instants import from_micros
from core.keys import ContentKey
from store.nodes import StoredRef
from store.schema import COMMITS
from store.state import Delta, IndexState


class CommitRecord:
    """A commit row as the store's internals use it. Operations are decoded on
    first use: a bulk-load commit can carry many thousands of them. ``state``
    is filled in by whoever knows it (the writer, or ObjectReader.state)."""

    __slots__ = ("_operations", "_ops_raw", "author", "committer", "created_us", "depth",
                 "generation", "hash", "message", "parents", "properties", "root", "state")

    def __init__(self, hash_: str, parents: tuple[str, ...], generation: int, created_us: int,
                 author: str | None, committer: str | None, message: str,
                 properties: dict[str, str],
                 operations: tuple[CommitOperation, ...] | str | None,
                 root: StoredRef | None, depth: int,
                 state: IndexState | None = None) -> None:
        self.hash = hash_
        self.parents = parents
        self.generation = generation
        self.created_us = created_us
        self.author = author
        self.committer = committer
        self.message = message
        self.properties = properties
        self.root = root
        self.depth = depth
        self.state = state if state is not None else (
            IndexState(root, {}) if depth == 0 else None)
        if operations is None or isinstance(operations, str):
            self._ops_raw: str | None = operations
            self._operations: tuple[CommitOperation, ...] | None = None
        else:
            self._ops_raw = None
            self._operations = operations

    @property
    def light(self) -> bool:
        """Read without its operations (a log page): never cached, and
        asking it for them is a bug."""
        return self._ops_raw is None and self._operations is None

    @property
    def operations(self) -> tuple[CommitOperation, ...]:
        if self._operations is None:
            if self._ops_raw is None:
                raise RuntimeError(f"commit {self.hash} was read without its operations")
            self._operations = decode_operations(self._ops_raw)
        return self._operations

    def changes(self) -> Delta:
        """This commit's operations as a delta (key → entry, None for a delete),
        without building ContentKeys: cold state loads fold many of these."""
        if self._operations is not None:
            return {op.key.internal: op.entry for op in self._operations}
        return {item[1]: IndexEntry(ContentType(item[2]), item[3], item[4], item[5])
                if len(item) > 2 else None for item in json.loads(self._ops_raw or "[]")}

    def to_commit(self) -> Commit:
        return Commit(self.hash, self.parents, self.message, self.author, self.committer,
                      from_micros(self.created_us), dict(self.properties), self.operations)

    def to_commit_light(self) -> Commit:
        """The commit with no operations (for a log page that shows none)."""
        return Commit(self.hash, self.parents, self.message, self.author, self.committer,
                      from_micros(self.created_us), dict(self.properties), ())


# Operation lists decoded, process-wide: a log page must not add to it
# (tests/store/test_scale_reads.py), and a bulk commit's list is large.
DECODED = {"lists": 0, "operations": 0}


def decode_operations(raw: str) -> tuple[CommitOperation, ...]:
    DECODED["lists"] += 1
    ops = []
    for item in json.loads(raw):
        entry = (IndexEntry(ContentType(item[2]), item[3], item[4], item[5])
                 if len(item) > 2 else None)
        ops.append(CommitOperation(OpKind(item[0]), ContentKey.from_internal(item[1]), entry))
    DECODED["operations"] += len(ops)
    return tuple(ops)


def record_from_row(row: object) -> CommitRecord:
    parents: tuple[str, ...] = (row.parent,) if row.parent else ()  # type: ignore[attr-defined]
    if row.merge_parents:  # type: ignore[attr-defined]
        parents += tuple(json.loads(row.merge_parents))  # type: ignore[attr-defined]
    return CommitRecord(
        row.hash, parents, row.generation, row.created_us,  # type: ignore[attr-defined]
        row.author, row.committer, row.message,  # type: ignore[attr-defined]
        json.loads(row.properties),  # type: ignore[attr-defined]
        getattr(row, "operations", None),
        (row.root, row.root_loc) if getattr(row, "root", None) else None,  # type: ignore[attr-defined]
        getattr(row, "depth", -1))


COMMIT_COLUMNS = [c for c in COMMITS.c if c.name != "pack"]
# A commit without its operations, for log pages (a bulk commit's list is
# megabytes of text that a page showing its message does not need): the
# columns stored before them, since SQLite reaches a later column of a row
# only through its earlier ones' overflow pages. Such a record has no index
# root (it is never cached, and never asked for its keys).
LIGHT_COLUMNS = COMMIT_COLUMNS[:[c.name for c in COMMIT_COLUMNS].index("operations")]
# Everything but the operations (and the pack): what fsck's walk needs.
SKELETON_COLUMNS = [c for c in COMMIT_COLUMNS if c.name != "operations"]
