"""Whether a SQLite database in WAL mode was written since a moment, without
asking SQLite: the header of its WAL-index (the ``-shm`` file).

Every read of a ref's head was an SQL statement, and on a cached loadTable
that statement was the largest single cost left (and, since the driver lets
go of the GIL around it, the point where a busy background thread took the
request's time; docs/performance.md). The WAL-index header is SQLite's own
change detector, documented in its file format ("The WAL-Index Format"):
every committed transaction rewrites it (its change counter ``iChange``, the
last frame ``mxFrame``, the salts and checksums), in two copies, the second
written first, so a reader that finds the copies equal has a header no
commit is half-way through. Equal headers at two moments mean no
transaction committed in between, by this process or any other (replicas,
the CLI). Anything unexpected — no ``-shm`` file, a header that is not
initialised, copies that differ — answers "unknown", and the caller reads
the database as before.

One connection to the database stays open while the header is watched: the
last connection to close deletes the ``-shm`` file, and a watcher mapping a
deleted file would see a header no one writes any more.
"""

from __future__ import annotations

import mmap
import os
import sqlite3
import threading

_HEADER = 48  # bytes in one copy of the WAL-index header
_VERSION = (3007000).to_bytes(4, "little"), (3007000).to_bytes(4, "big")


class WalWatch:
    def __init__(self, path: str) -> None:
        self.path = path
        self._map: mmap.mmap | None = None
        self._keep: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._tried = False

    def token(self) -> bytes | None:
        """The current header (compare two with ``==``), or None: unknown."""
        m = self._map
        if m is None:
            if self._tried:
                return None
            m = self._open()
            if m is None:
                return None
        try:
            head = m[:2 * _HEADER]
        except ValueError:  # closed with the store
            return None
        first = head[:_HEADER]
        # isInit (byte 12) set, a known version, and both copies equal.
        if first[12] != 1 or first[:4] not in _VERSION or first != head[_HEADER:]:
            return None
        return first

    def _open(self) -> mmap.mmap | None:
        with self._lock:
            if self._map is not None or self._tried:
                return self._map
            self._tried = True
            try:
                keep = sqlite3.connect(self.path, check_same_thread=False)
                keep.execute("SELECT count(*) FROM sqlite_master").fetchall()
                if keep.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    keep.close()
                    return None
                fd = os.open(self.path + "-shm", os.O_RDONLY)
            except (OSError, sqlite3.Error):
                return None
            try:
                if os.fstat(fd).st_size < 2 * _HEADER:
                    keep.close()
                    return None
                self._map = mmap.mmap(fd, 2 * _HEADER, mmap.MAP_SHARED, mmap.PROT_READ)
            finally:
                os.close(fd)
            self._keep = keep
            return self._map

    def close(self) -> None:
        with self._lock:
            if self._map is not None:
                self._map.close()
                self._map = None
            if self._keep is not None:
                self._keep.close()
                self._keep = None
