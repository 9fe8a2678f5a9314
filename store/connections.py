"""Dedicated database connections for the hot paths: commits, and the one
read every request makes (a ref's head).

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
class DedicatedConnection:
    fairy: Any  # SQLAlchemy's wrapper, detached from its pool; closing it closes the driver's
    cursor: Any
    used: float

    @property
    def broken(self) -> bool:
        return bool(getattr(self.fairy.dbapi_connection, "broken", False))


class DedicatedConnections:
    def __init__(self, engine: Engine, *, size: int, autocommit: bool) -> None:
        self._engine = engine
        self._autocommit = autocommit
        self._idle: list[DedicatedConnection] = []  # most recently used last
        self._opened = 0  # idle + in use
        self._waiting = 0
        # A plain lock on the hot path; the condition only when all are busy.
        self._lock = threading.Lock()
        self._returned = threading.Condition(self._lock)
        self.size = size

    def acquire(self) -> DedicatedConnection:
        with self._lock:
            c = self._take()
        if c is not None and (c.broken or not self._alive(c)):
            self._close(c)
            c = None
        if c is None:
            try:
                return self._open()
            except BaseException:
                self._forget_one()
                raise
        return c

    def _take(self) -> DedicatedConnection | None:
        """An idle connection, or None with a slot reserved to open one."""
        deadline = time.monotonic() + WAIT_S
        while not self._idle and self._opened >= self.size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RetryLimitError(
                    f"all {self.size} dedicated connections stayed busy for {WAIT_S:.0f} s")
            self._waiting += 1
            try:
                self._returned.wait(left)
            finally:
                self._waiting -= 1
        if self._idle:
            return self._idle.pop()
        self._opened += 1
        return None

    def release(self, c: DedicatedConnection, broken: bool = False) -> None:
        if broken or c.broken:
            self._close(c)
            self._forget_one()
            # One lost connection usually means the server restarted or dropped
            # idle clients: the idle ones are as dead, so the retry opens anew.
            self.dispose()
            return
        c.used = time.monotonic()
        with self._lock:
            self._idle.append(c)
            if self._waiting:
                self._returned.notify()

    def dispose(self) -> None:
        """Close the idle connections; ones in use are closed if they come
        back broken (a disposed store is not used again)."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._opened -= len(idle)
            if self._waiting:
                self._returned.notify_all()
        for c in idle:
            self._close(c)

    def _forget_one(self) -> None:
        with self._lock:
            self._opened -= 1
            if self._waiting:
                self._returned.notify()

    def _open(self) -> DedicatedConnection:
        fairy = self._engine.raw_connection()
        conn = fairy.dbapi_connection
        assert conn is not None  # a connection just opened
        fairy.detach()  # ours from now on; the engine's pool opens another
        if self._autocommit:
            conn.autocommit = True
        return DedicatedConnection(fairy, conn.cursor(), time.monotonic())

    @staticmethod
    def _alive(c: DedicatedConnection) -> bool:
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
    def _close(c: DedicatedConnection) -> None:
        with suppress(Exception):
            c.fairy.close()
