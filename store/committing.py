"""Planning a commit: Nessie's rules for operations, checked against a head."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from core.commits import (
    CommitMeta,
    CommitResult,
    Delete,
    IndexEntry,
    Operation,
    Put,
    Reference,
    Unchanged,
)
from core.conflicts import CommitConflictError, Conflict, ConflictType
from core.content import Content, ContentType
from core.errors import InvalidOperationError
from core.instants import from_micros
from core.keys import SEP, ContentKey, check_new_key
from core.merge import namespace_conflicts
from store.history import History
from store.objects import ObjectReader
from store.state import IndexState, StateIndex
from store.writes import WriteSet, seal

_TYPES = {t.value: t for t in ContentType}


def validate_operations(ops: Sequence[Operation]) -> None:
    seen: set[ContentKey] = set()
    for op in ops:
        if not isinstance(op, Put | Delete | Unchanged):
            raise InvalidOperationError(f"unknown operation {op!r}")
        if isinstance(op, Put):
            check_new_key(op.key)
        if op.key in seen:
            raise InvalidOperationError(f"key '{op.key}' appears in more than one operation")
        seen.add(op.key)


class CommitPlanner:
    def __init__(self, reader: ObjectReader, index: StateIndex, history: History) -> None:
        self.reader = reader
        self.index = index
        self.history = history

    def plan(self, head: Reference, ops: Sequence[Operation], meta: CommitMeta,
             expected: str | None, principal: str | None, now_us: int,
             ) -> WriteSet[CommitResult]:
        parent = self.reader.commit(head.hash)
        pstate = self.reader.state(parent)
        conflicts: list[Conflict] = []
        keys = [op.key.internal for op in ops]
        if expected is not None and expected != head.hash:
            conflicts += self._changed_since(head, pstate, expected, keys)
        names = set(keys)
        for op in ops:
            if isinstance(op, Put):
                names.update(op.key.ancestor_internals())
        current = self.index.get_many(pstate, names)
        deleted_ids = {current[op.key.internal].content_id for op in ops  # type: ignore[union-attr]
                       if isinstance(op, Delete) and current[op.key.internal] is not None}

        changes: dict[str, IndexEntry | None] = {}
        contents: dict[str, tuple[Content, bytes]] = {}
        assigned: dict[ContentKey, str] = {}
        moved = {c.key for c in conflicts}
        for op in ops:
            if isinstance(op, Unchanged) or op.key in moved:
                continue  # Unchanged only takes part in the expected-hash check
            cur = current[op.key.internal]
            if isinstance(op, Delete):
                c = _check_delete(op, cur)
                if c:
                    conflicts.append(c)
                else:
                    changes[op.key.internal] = None
                continue
            content, conflict = _check_put(op, cur, deleted_ids)
            if conflict:
                conflicts.append(conflict)
                continue
            if content.id is None:
                content = content.with_id(str(uuid.uuid4()))
                assigned[op.key] = content.id  # type: ignore[assignment]
            vh, data = content.hashed()
            contents[vh] = (content, data)
            changes[op.key.internal] = IndexEntry(_TYPES[content.type], content.id, vh)  # type: ignore[arg-type]

        conflicts += self._namespace_conflicts(pstate, changes, current)
        if conflicts:
            raise CommitConflictError(conflicts)

        state, nodes, depth = self.index.apply(pstate, changes, parent.depth)
        new = seal([parent], state, depth, nodes, {vh: d for vh, (_, d) in contents.items()}, meta,
                   changes, now_us, principal)
        self.reader.remember_contents(contents)
        rec = new.record
        result = CommitResult(rec.hash, parent.hash, from_micros(rec.created_us), assigned)
        return WriteSet(result, [new], "commit")

    def _changed_since(self, head: Reference, pstate: IndexState, expected: str,
                       keys: list[str]) -> list[Conflict]:
        """Nessie's rule: a stale expected hash is fine if none of the keys moved."""
        if not self.history.is_ancestor(expected, head.hash):
            raise CommitConflictError([Conflict(
                ConflictType.UNEXPECTED_HASH, None,
                f"expected hash {expected} is not in the history of branch '{head.name}' "
                f"(head {head.hash})")])
        then = self.index.get_many(self.reader.state(self.reader.commit(expected)), keys)
        now = self.index.get_many(pstate, keys)
        return [Conflict(ConflictType.VALUE_DIFFERS, ContentKey.from_internal(k),
                         f"key '{ContentKey.from_internal(k)}' changed on branch "
                         f"'{head.name}' after the expected commit {expected[:12]}")
                for k in keys if then[k] != now[k]]

    def _namespace_conflicts(self, st: IndexState, changes: dict[str, IndexEntry | None],
                             current: dict[str, IndexEntry | None]) -> list[Conflict]:
        def lookup(k: str) -> IndexEntry | None:
            if k in changes:
                return changes[k]
            return current[k] if k in current else self.index.get(st, k)

        def emptied(k: str) -> bool:
            was = current.get(k)
            return (was is not None and was.type is ContentType.NAMESPACE
                    and has_children(self.index, st, changes, k))

        return namespace_conflicts(changes, lookup, emptied)


def has_children(index: StateIndex, st: IndexState, changes: dict[str, IndexEntry | None],
                 ns: str) -> bool:
    """Whether anything is left below the key ``ns`` once ``changes`` apply."""
    prefix = ns + SEP
    if any(k.startswith(prefix) and e is not None for k, e in changes.items()):
        return True
    for k, _ in index.items(st, prefix):
        if not k.startswith(prefix):
            return False
        if k not in changes:
            return True
    return False


def _check_delete(op: Delete, cur: IndexEntry | None) -> Conflict | None:
    if cur is None:
        return Conflict(ConflictType.KEY_DOES_NOT_EXIST, op.key,
                        f"key '{op.key}' does not exist")
    if op.expected is not None and op.expected.value_hash() != cur.value_hash:
        return Conflict(ConflictType.VALUE_DIFFERS, op.key,
                        f"key '{op.key}' does not hold the expected content")
    return None


def _check_put(op: Put, cur: IndexEntry | None,
               deleted_ids: set[str]) -> tuple[Content, Conflict | None]:
    c = op.content
    if cur is None:
        if op.expected is not None:
            return c, Conflict(ConflictType.KEY_DOES_NOT_EXIST, op.key,
                               f"key '{op.key}' does not exist, but expected content was given")
        if c.id is not None and c.id not in deleted_ids and not op.revive:
            return c, Conflict(ConflictType.KEY_DOES_NOT_EXIST, op.key,
                               f"key '{op.key}' does not exist; new content must not carry an "
                               f"id (content {c.id} is not being renamed in this commit)")
        return c, None
    if c.id is None:
        return c, Conflict(ConflictType.KEY_EXISTS, op.key,
                           f"key '{op.key}' already exists (content {cur.content_id}); "
                           "an update must carry its id and the expected content")
    if c.id != cur.content_id:
        return c, Conflict(ConflictType.CONTENT_ID_DIFFERS, op.key,
                           f"key '{op.key}' holds content {cur.content_id}, not {c.id}")
    if c.type != cur.type:
        return c, Conflict(ConflictType.PAYLOAD_DIFFERS, op.key,
                           f"key '{op.key}' holds a {cur.type}; cannot store a {c.type} there")
    if op.expected is None:
        raise InvalidOperationError(
            f"Put on existing key '{op.key}' must carry the expected content (the value the "
            "update was based on)")
    if op.expected.value_hash() != cur.value_hash:
        return c, Conflict(ConflictType.VALUE_DIFFERS, op.key,
                           f"key '{op.key}' does not hold the expected content: it changed")
    return c, None
