"""Every file the retained history of one object may reference, kept as a
set per object: so that signing a write of a new object (catalog.delegation:
a PutObject, a multipart upload) costs a set look-up, not a walk of the
object's history, and stays exact — a key that a version some reference
retains references is never answered "free" here.

An object's set is the union of the files (catalog.maintenance.liveness'
walk: the metadata file, statistics files, manifest lists, manifests and
the data and delete files they list) of every version of it that history
retained whenever the set was brought up to date, walked once each: a
version's files never change (metadata files, manifest lists and manifests
are immutable), and a manifest list or manifest an earlier version named is
not read again. It is brought up to date — the retained versions asked of
the store (store.held) and the new ones walked — when the store's commit
token (store.db.commit_token: SQLite's data_version, PostgreSQL's snapshot)
differs from the one it was made at, that is once something was committed
anywhere; while the token is the same, no version can have been added to
any reference's retained history (time passing only takes versions out of
it), so the set still holds every file a retained version references. It
may hold more (a version since expired): a key found in it, or in the
folders of a table whose files could not all be read
(referenced.kept_folders), is asked of the exact check
(liveness.Liveness.holders), which says which retained commit references
it or answers that none does.

Bounded: the sets share one byte budget (estimated, least recently used
first out); an object whose set alone would exceed it is not kept (its
writes take the exact check) and not tried again for ``_BIG_RETRY_S``. A set
that met damage is made again from nothing after ``_DAMAGE_RETRY_S`` (a
read that timed out is read again; a file repaired is read as it is now)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet

from catalog.maintenance.referenced import Damaged, in_folders, kept_folders
from core.content import Content
from core.lru import LRU
from store import Store
from store.held import HeldVersions
from store.retention import grace_setting

_DAMAGE_RETRY_S = 60.0
_BIG_RETRY_S = 600.0
# What one path costs in memory: the string and a set slot, about.
_PER_PATH = 160

Walk = Callable[[Content, set[str], list[Damaged]], Iterator[AbstractSet[str]]]


class _TooBig(Exception):
    """A set outgrew the whole budget while it was walked."""


class _Files:
    """One object's set, and what it was made from."""

    def __init__(self) -> None:
        self.token: object | None = None  # the commit token it is up to date with
        self.entries: set[str] = set()  # the versions walked (value hashes)
        self.paths: set[str] = set()  # the files they reference (normalised)
        self.seen: set[str] = set()  # manifest lists and manifests walked
        self.folders: frozenset[str] = frozenset()  # kept for damage (normalised)
        self.damaged_at: float | None = None
        self.broken = False
        self.lock = threading.Lock()

    def stale(self) -> bool:
        """Made again from nothing: after a failed walk, or once damage met
        is older than the retry interval."""
        return self.broken or (self.damaged_at is not None
                               and time.monotonic() - self.damaged_at > _DAMAGE_RETRY_S)

    @property
    def bytes(self) -> int:
        return (len(self.paths) + len(self.seen) + len(self.entries)) * _PER_PATH + 512


class ReferencedSets:
    def __init__(self, store: Store, versions: HeldVersions, walk: Walk,
                 max_bytes: int) -> None:
        self.store = store
        self.versions = versions
        self.walk = walk
        self.max_bytes = max_bytes
        self._sets: LRU[str, _Files] = LRU(100_000, max_bytes, lambda f: f.bytes)
        # Objects whose set is over the budget, and when that was found.
        self._big: LRU[str, float] = LRU(10_000)
        self._lock = threading.Lock()

    def free(self, content_ids: Iterable[str], paths: Sequence[str],
             token: object | None) -> bool:
        """True when no version of ``content_ids`` that history retains
        references any of ``paths`` (normalised) and none lies in the
        folders of one of them whose files could not all be read; False
        when that is not known here (ask liveness.Liveness.holders)."""
        if token is None:
            return False
        for cid in content_ids:
            f = self._current(cid, token)
            if f is None or any(p in f.paths for p in paths):
                return False
            if f.folders and any(in_folders(p, f.folders) for p in paths):
                return False
        return True

    def _current(self, cid: str, token: object) -> _Files | None:
        """``cid``'s set, up to date with ``token``; None when it is too big,
        or a walk of it failed."""
        f = self._sets.get(cid)
        if f is not None and f.token == token and not f.stale():
            return f
        big = self._big.get(cid)
        if big is not None and time.monotonic() - big < _BIG_RETRY_S:
            return None
        with self._lock:
            f = self._sets.get(cid)
            if f is None or f.stale():
                f = _Files()
                self._sets.put(cid, f)
        with f.lock:
            if f.broken:
                return None  # another request's walk of it failed just now
            if f.token != token:
                try:
                    self._extend(cid, f)
                except _TooBig:
                    f.broken = True
                    self._sets.pop(cid)
                    self._big.put(cid, time.monotonic())
                    return None
                except BaseException:
                    # Part of a version walked: what it read is not known
                    # whole, so the set is not used again.
                    f.broken = True
                    self._sets.pop(cid)
                    raise
                # Set last: a reader that sees the token sees every path.
                f.token = token
            size = f.bytes
        if size > self.max_bytes:
            self._sets.pop(cid)
            self._big.put(cid, time.monotonic())
            return None
        self._sets.put(cid, f)  # again: its size is counted as it is now
        return f

    def _extend(self, cid: str, f: _Files) -> None:
        """Walk the versions of ``cid`` that history retains now and ``f``
        has not walked."""
        fresh = {h.entry.value_hash: h.entry for h in self.versions.of(cid, grace_setting())
                 if h.entry.value_hash not in f.entries}
        contents = self.store.reader.load_contents(fresh.values())
        hurt: list[Damaged] = []
        for value_hash in fresh:
            for chunk in self.walk(contents[value_hash], f.seen, hurt):
                f.paths.update(chunk)
                if f.bytes > self.max_bytes:
                    raise _TooBig
            f.entries.add(value_hash)
        if hurt:
            claimed = self.store.locations.places({cid})
            f.folders = f.folders | kept_folders(hurt, claimed)
            if f.damaged_at is None:
                f.damaged_at = time.monotonic()
