"""Dedicated database connections for the commit path.

SQLAlchemy's pool resets a connection on every return (a rollback round trip)
and, with pre-ping, checks it on every checkout (another): on PostgreSQL that
is more than a whole commit statement. These connections are taken out of the
engine once, kept in driver autocommit (transactions are explicit), checked
only after an idle spell, and replaced when the driver reports them broken.
At most ``size`` exist per process, so a server's thread pool cannot exhaust
the database's connection limit.
"""

from __future__ import annotations

import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from core.errors import RetryLimitError

IDLE_CHECK_S = 30.0
WAIT_S = 60.0


@dataclass(eq=False)
class WriterConnection:
    fairy: Any  # SQLAlchemy's wrapper, detached from its pool; closing it closes the driver's
    cursor: Any
    used: float

    @property
    def broken(self) -> bool:
        return bool(getattr(self.fairy.dbapi_connection, "broken", False))


class WriterConnections:
    def __init__(self, engine: Engine, *, size: int, autocommit: bool) -> None:
        self._engine = engine
        self._autocommit = autocommit
        self._idle: list[WriterConnection] = []  # most recently used last
        self._lock = threading.Lock()
        self._free = threading.BoundedSemaphore(size)
        self.size = size

    def acquire(self) -> WriterConnection:
        if not self._free.acquire(timeout=WAIT_S):
            raise RetryLimitError(
                f"all {self.size} writer connections stayed busy for {WAIT_S:.0f} s")
        try:
            with self._lock:
                c = self._idle.pop() if self._idle else None
            if c is not None and (c.broken or not self._alive(c)):
                self._close(c)
                c = None
            return c if c is not None else self._open()
        except BaseException:
            self._free.release()
            raise

    def release(self, c: WriterConnection, broken: bool = False) -> None:
        if broken or c.broken:
            self._close(c)
            # One lost connection usually means the server restarted or dropped
            # idle clients: the idle ones are as dead, so the retry opens anew.
            self.dispose()
        else:
            c.used = time.monotonic()
            with self._lock:
                self._idle.append(c)
        self._free.release()

    def dispose(self) -> None:
        """Close the idle connections (busy ones are closed as they come back
        only if broken; a disposed store is not used again)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            self._close(c)

    def _open(self) -> WriterConnection:
        fairy = self._engine.raw_connection()
        conn = fairy.dbapi_connection
        fairy.detach()  # ours from now on; the engine's pool opens another
        if self._autocommit:
            conn.autocommit = True
        return WriterConnection(fairy, conn.cursor(), time.monotonic())

    @staticmethod
    def _alive(c: WriterConnection) -> bool:
        if time.monotonic() - c.used < IDLE_CHECK_S:
            return True
        # Idle for a while: the server may have dropped it. One check now
        # instead of one on every commit.
        try:
            c.cursor.execute("SELECT 1")
            c.cursor.fetchall()
        except Exception:
            return False
        return True

    @staticmethod
    def _close(c: WriterConnection) -> None:
        with suppress(Exception):
            c.fairy.close()
