"""Whether a SQLite database was written since a moment, asked cheaply:
``PRAGMA data_version`` on a connection of its own that never writes.

Every read of a ref's head was a query through the reader pool, and on a
cached loadTable it was the largest single cost left (docs/performance.md).
``data_version`` is SQLite's own change counter: two answers on one
connection differ when any other connection — of this process or another
(replicas, the CLI, gc) — committed in between. So a head read while the
version is what it was at the last read is the same head. The pragma costs
about 4 µs against 25 for the query it saves.

(Reading the WAL-index header out of the ``-shm`` file was tried first:
cheaper, but a second descriptor on that file, once closed, drops SQLite's
POSIX locks on it for the whole process, another process then truncates
the file, and the mapping faults. Never open SQLite's files behind its back.)
"""

from __future__ import annotations

import sqlite3
import threading


class DataVersion:
    def __init__(self, path: str, timeout_s: float) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self._conn: sqlite3.Connection | None = None
        self._cursor: sqlite3.Cursor | None = None
        self._lock = threading.Lock()

    def token(self) -> int | None:
        """The current version (compare two with ``==``), or None: unknown."""
        with self._lock:
            try:
                cur = self._cursor
                if cur is None:
                    self._conn = sqlite3.connect(self.path, check_same_thread=False,
                                                 isolation_level=None, timeout=self.timeout_s)
                    cur = self._cursor = self._conn.cursor()
                cur.execute("PRAGMA data_version")
                row = cur.fetchone()
            except sqlite3.Error:
                self._drop()
                return None
            return int(row[0]) if row is not None else None

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = self._cursor = None

    def close(self) -> None:
        """Close the connection (with the pools: Database.dispose); the next
        check opens another."""
        with self._lock:
            self._drop()
