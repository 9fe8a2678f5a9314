"""Read side: resolving reference specs, and entries, contents, log and diff
at whatever commit a spec names."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Self

from sqlalchemy import select

from core.commits import (
    Commit,
    DiffEntry,
    Entry,
    IndexEntry,
    Page,
    RefType,
    ResolvedRef,
)
from core.content import Content, ContentType
from core.errors import CommitNotFoundError, ContentNotFoundError
from core.instants import to_micros
from core.keys import SEP, ContentKey
from core.missing import ambiguous_prefix, no_such_commit
from core.pages import clamp_page_size, decode_token, encode_token
from core.refs import HASH_LENGTH, Ancestor, AtInstant, Parent, RefSpec, parse_ref
from store.changes import ChangeIndex
from store.db import Database
from store.history import History
from store.index import KeyIndex
from store.indexed_history import chain_log, reached_puts
from store.objects import ObjectReader
from store.refs import Refs
from store.retention import Retention
from store.schema import COMMITS
from store.state import IndexState, StateIndex

# How many commits sharing a prefix are weighed; in a store with fewer than
# 2^32 commits, 8 hex characters are shared by a handful at most.
PREFIX_MATCHES = 64


class Reads:
    def __init__(self, db: Database, reader: ObjectReader, index: KeyIndex, refs: Refs,
                 history: History, changes: ChangeIndex, retention: Retention) -> None:
        self.db = db
        self.changes = changes
        self.retention = retention
        self.reader = reader
        self.index = index  # the tree
        self.states = StateIndex(index)  # tree + a commit's delta
        self.refs = refs
        self.history = history
        # Which commits a hash prefix may name (None: every commit): those
        # the caller these reads serve may see (``seeing``).
        self.sees: Callable[[str], bool] | None = None

    # -- resolution --------------------------------------------------------------
    def resolve(self, spec: str | RefSpec) -> ResolvedRef:
        if isinstance(spec, str):
            spec = parse_ref(spec)
        parts = list(spec.parts)
        ref_type: RefType | None = None
        head: str | None = None
        if spec.hash is not None:
            if spec.name is not None:
                ref = self.refs.get(spec.name)
                ref_type, head = ref.type, ref.hash
            h = self.full_hash(spec.hash)
        elif spec.reflog_instant is not None:
            h, ref_type = self.refs.head_at(spec.name, to_micros(spec.reflog_instant))  # type: ignore[arg-type]
            parts = parts[1:]
        else:
            ref = self.refs.get(spec.name)  # type: ignore[arg-type]
            h, ref_type = ref.hash, ref.type
            head = h
        for part in parts:
            h = self._step(spec, h, part)
        if h != head:
            # Anything but a head is read only while some reference retains it
            # (store.retention; free while no policy is set).
            self.retention.check(h, spec.name)
        return ResolvedRef(h, spec.name, ref_type,
                           writable=spec.is_plain and ref_type is RefType.BRANCH)

    def _step(self, spec: RefSpec, h: str, part: Ancestor | Parent | AtInstant) -> str:
        if isinstance(part, Ancestor):
            # O(log n) down the chain's skip pointers (store.changes).
            depth = self.changes.ancestry([h])[h].depth
            nxt = self.changes.ancestor_at(h, depth - part.n) if part.n <= depth else None
            if nxt is None:
                raise CommitNotFoundError(
                    f"'{spec}': commit {h[:12]} has fewer than {part.n} ancestors")
            return nxt
        if isinstance(part, Parent):
            parents = self.reader.commit(h).parents
            if part.n > len(parents):
                raise CommitNotFoundError(
                    f"'{spec}': commit {h[:12]} has {len(parents)} parent(s), no parent #{part.n}")
            return parents[part.n - 1]
        nxt = self.changes.at_or_before(h, to_micros(part.at))
        if nxt is None:
            raise CommitNotFoundError(f"'{spec}': no commit at or before {part}")
        return nxt

    def seeing(self, sees: Callable[[str], bool]) -> Self:
        """These reads (and the writes of a Store) for one caller: a hash
        prefix names only the commits ``sees`` accepts, as if no other
        commit existed (a caller learns nothing of the commits it may not
        see from a prefix). The rest is shared: caches, connections."""
        scoped = object.__new__(type(self))  # a copy (once per request: cheaper than copy's)
        scoped.__dict__.update(self.__dict__)
        scoped.sees = sees
        return scoped

    def full_hash(self, prefix: str) -> str:
        if len(prefix) == HASH_LENGTH:
            self.reader.commit(prefix)
            return prefix
        seen = self.sees
        found = self.hashes_with_prefix(prefix, 2 if seen is None else PREFIX_MATCHES)
        if seen is not None:
            found = [h for h in found if seen(h)]
        if not found:
            raise no_such_commit(prefix)
        if len(found) > 1:
            raise ambiguous_prefix(prefix)
        return found[0]

    def hashes_with_prefix(self, prefix: str, limit: int = PREFIX_MATCHES) -> list[str]:
        """The commits whose hash starts with ``prefix`` (a full hash: that
        one, if it exists), at most ``limit`` of them."""
        if len(prefix) == HASH_LENGTH:
            try:
                self.reader.commit(prefix)  # cached: clients pin the same few hashes
            except CommitNotFoundError:
                return []
            return [prefix]
        q = (select(COMMITS.c.hash)
             .where(COMMITS.c.hash >= prefix, COMMITS.c.hash < prefix + "g")
             .order_by(COMMITS.c.hash).limit(limit))
        with self.db.read() as conn:
            return list(conn.execute(q).scalars().all())

    def state_of(self, spec: str | RefSpec) -> tuple[ResolvedRef, IndexState]:
        resolved = self.resolve(spec)
        return resolved, self.reader.state(self.reader.commit(resolved.hash))

    # -- entries and contents ------------------------------------------------------
    def entries(self, spec: str | RefSpec, namespace: ContentKey | None = None,
                depth: int | None = None, types: Iterable[ContentType] | None = None,
                page_token: str | None = None, page_size: int | None = None,
                with_content: bool = False,
                visible: Callable[[tuple[str, ...]], bool] | None = None) -> Page[Entry]:
        """Keys below ``namespace`` (all, or ``depth`` levels down), in key
        order; ``visible``: the keys the caller may see (by their elements),
        the others skipped before paging, so the token names a visible key."""
        _, state = self.state_of(spec)
        size = clamp_page_size(page_size)
        prefix = namespace.child_prefix() if namespace else ""
        wanted = set(types) if types else None
        start = max(prefix, decode_token(page_token)) if page_token else prefix
        found: list[tuple[str, IndexEntry]] = []
        for k, e in self._walk(state, start, prefix, depth):
            if wanted is not None and e.type not in wanted:
                continue
            if visible is not None and not visible(tuple(k.split(SEP))):
                continue
            found.append((k, e))
            if len(found) > size:
                break
        token = encode_token(found[size][0]) if len(found) > size else None
        found = found[:size]
        values = (self.reader.load_contents(e for _, e in found) if with_content else {})
        items = [Entry(ContentKey.from_internal(k), e.type, e.content_id,
                       values.get(e.value_hash))
                 for k, e in found]
        return Page(items, token)

    def _walk(self, state: IndexState, start: str, prefix: str,
              depth: int | None) -> Iterator[tuple[str, IndexEntry]]:
        """The entries from ``start`` under ``prefix``, at most ``depth``
        levels below it, in key order. A key deeper than that is not walked
        past one by one: the walk seeks beyond its ancestor's whole subtree
        (a fresh descent of the index, O(log n)), so a listing at a depth
        costs O(page * log n) whatever lies below the keys it returns."""
        while True:
            for k, e in self.states.items(state, start):
                if not k.startswith(prefix):
                    return
                if depth is None:
                    yield k, e
                    continue
                cut = _nth(k, SEP, len(prefix), depth)
                if cut < 0:  # at most ``depth`` below: listed
                    yield k, e
                    continue
                # Deeper: everything under k[:cut] sorts before k[:cut] + "\x01".
                start = k[:cut] + _PAST_SUBTREE
                break
            else:
                return

    def contents(self, spec: str | RefSpec, keys: Iterable[ContentKey],
                 ) -> dict[ContentKey, Content]:
        return self.lookup(spec, keys)[1]

    def lookup(self, spec: str | RefSpec, keys: Iterable[ContentKey],
               ) -> tuple[ResolvedRef, dict[ContentKey, Content]]:
        """The commit ``spec`` names, and the values of those ``keys`` that exist
        there: a writer uses the hash as its commit's expected hash."""
        resolved, state = self.state_of(spec)
        keys = list(keys)
        entries = self.states.get_many(state, (k.internal for k in keys))
        values = self.reader.load_contents(e for e in entries.values() if e)
        return resolved, {k: values[e.value_hash] for k in keys
                          if (e := entries[k.internal]) is not None}

    def contents_at(self, h: str, keys: Iterable[ContentKey]) -> dict[ContentKey, Content]:
        """The values at commit ``h``, whatever retention says: for a merge
        base, which may lie in expired history while both heads are retained
        (its files may be gone; the caller says so if it needs them)."""
        state = self.reader.state(self.reader.commit(h))
        keys = list(keys)
        entries = self.states.get_many(state, (k.internal for k in keys))
        values = self.reader.load_contents(e for e in entries.values() if e)
        return {k: values[e.value_hash] for k in keys if (e := entries[k.internal]) is not None}

    def content(self, spec: str | RefSpec, key: ContentKey) -> Content:
        found = self.contents(spec, [key])
        if key not in found:
            raise ContentNotFoundError(f"key '{key}' does not exist at '{spec}'")
        return found[key]

    # -- log and diff ----------------------------------------------------------------
    def log(self, spec: str | RefSpec, page_token: str | None = None,
            page_size: int | None = None, key: ContentKey | None = None,
            author: str | None = None, since_us: int | None = None,
            until_us: int | None = None, operations: bool = True) -> Page[Commit]:
        """First-parent history, newest first; filters answer from the change
        index (store.indexed_history). ``operations=False`` (what the log
        route asks unless fetch=ALL) reads the commits without theirs and
        leaves them empty: a page of bulk-load commits holds hundreds of
        thousands."""
        size = clamp_page_size(page_size)
        start = self.full_hash(decode_token(page_token)) if page_token else \
            self.resolve(spec).hash
        found, nxt = chain_log(self.changes, self.reader, self.history, start, size, key,
                               author, since_us, until_us, light=not operations)
        return Page([r.to_commit() if operations else r.to_commit_light() for r in found],
                    encode_token(nxt) if nxt else None)

    def lineage(self, spec: str | RefSpec, content_id: str) -> list[Commit]:
        """The commits that put content ``content_id`` in the history of
        ``spec`` (over every parent, so across merges and renames), newest first."""
        return [r.to_commit() for r in reached_puts(self.changes, self.reader,
                                                    self.resolve(spec).hash, content_id)]

    def diff(self, from_spec: str | RefSpec, to_spec: str | RefSpec,
             page_token: str | None = None, page_size: int | None = None,
             ) -> Page[DiffEntry]:
        _, a = self.state_of(from_spec)
        _, b = self.state_of(to_spec)
        size = clamp_page_size(page_size)
        changed = self.states.diff(a, b)
        if page_token:
            after = decode_token(page_token)
            changed = [c for c in changed if c[0] >= after]
        token = encode_token(changed[size][0]) if len(changed) > size else None
        changed = changed[:size]
        values = self.reader.load_contents(
            e for _, x, y in changed for e in (x, y) if e is not None)
        items = [DiffEntry(ContentKey.from_internal(k),
                           values[x.value_hash] if x else None,
                           values[y.value_hash] if y else None) for k, x, y in changed]
        return Page(items, token)


# Keys are elements joined by SEP ("\x00", below every allowed character): a
# key's descendants all sort between it and the key plus "\x01".
_PAST_SUBTREE = chr(ord(SEP) + 1)


def _nth(text: str, sep: str, start: int, n: int) -> int:
    """The index of the ``n``-th ``sep`` in ``text`` from ``start`` (-1: fewer)."""
    i = start - 1
    for _ in range(n):
        i = text.find(sep, i + 1)
        if i < 0:
            return -1
    return i
