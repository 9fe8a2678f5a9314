"""Engines and transactions for SQLite (file, WAL) and PostgreSQL.

Two engines share one database: ``read`` runs each statement on its own
(immutable objects need no isolation), ``write`` wraps a unit of work in one
transaction. On SQLite a write transaction starts with BEGIN IMMEDIATE, so it
takes the write lock up front instead of failing on a lock upgrade.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, event
from sqlalchemy.engine import make_url

from core.errors import InvalidInputError

SQLITE_BUSY_TIMEOUT_S = 60
WRITER_IDLE_CHECK_S = 30.0


def default_database_url(data_dir: str | os.PathLike[str]) -> str:
    return f"sqlite:///{Path(data_dir).resolve() / 'sapwood.db'}"


class Database:
    def __init__(self, url: str) -> None:
        parsed = make_url(url)
        self.url = url
        self._local = threading.local()
        self._writers: list[Any] = []
        self._writers_lock = threading.Lock()
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            path = parsed.database
            if not path or path == ":memory:":
                raise InvalidInputError(
                    "Sapwood needs a SQLite *file* (sqlite:///path/to/file.db)")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            args: dict[str, Any] = {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S}
            self.read_engine = create_engine(url, connect_args=args, pool_size=8,
                                             max_overflow=32)
            self.write_engine = create_engine(url, connect_args=args, pool_size=8,
                                              max_overflow=32)
            for eng in (self.read_engine, self.write_engine):
                event.listen(eng, "connect", _sqlite_connect)
            event.listen(self.write_engine, "begin", _sqlite_begin_immediate)
        elif self.dialect == "postgresql":
            if parsed.drivername == "postgresql":
                url = parsed.set(drivername="postgresql+psycopg").render_as_string(
                    hide_password=False)
            self.read_engine = create_engine(url, isolation_level="AUTOCOMMIT", pool_size=8,
                                             max_overflow=32, pool_pre_ping=True)
            self.write_engine = create_engine(url, pool_size=8, max_overflow=32,
                                              pool_pre_ping=True)
        else:
            raise InvalidInputError(f"unsupported database {parsed.drivername!r}: "
                                    "use sqlite:///file.db or postgresql://…")
        self._begin = "BEGIN IMMEDIATE" if self.dialect == "sqlite" else "BEGIN"
        dbapi = self.write_engine.dialect.loaded_dbapi
        # After these the writer's own connection is not trusted again.
        self._dbapi_disconnects = (dbapi.OperationalError, dbapi.InterfaceError)
        # Errors after which a write may be re-planned on a fresh connection
        # (SQLite has no connection to lose: its OperationalErrors are locks).
        self.connection_errors: tuple[type[Exception], ...] = (
            self._dbapi_disconnects if self.dialect == "postgresql" else ())

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.read_engine.connect() as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.write_engine.begin() as conn:
            yield conn

    @contextmanager
    def raw_write(self) -> Iterator[Any]:
        """One transaction on this thread's own DBAPI connection, for the hot
        write path (prebuilt SQL, no statement compilation, no pool checkout
        and reset: those cost more than the statements). Yields a cursor."""
        with self._raw() as cur:
            yield cur

    def run_statement(self, sql: str, params: tuple[object, ...]) -> int:
        """One statement that is atomic on its own, on this thread's writer
        connection (PostgreSQL: no BEGIN/COMMIT round trips). Returns its
        rowcount."""
        cur = self._writer_connection()
        try:
            cur.execute(sql, params)
            return cur.rowcount
        except self._dbapi_disconnects:
            self._drop_writer_connection()
            raise
        finally:
            self._local.used = time.monotonic()

    @contextmanager
    def _raw(self) -> Iterator[Any]:
        # The connection is in driver autocommit: transactions are explicit.
        cur = self._writer_connection()
        try:
            cur.execute(self._begin)
            yield cur
            cur.execute("COMMIT")
        except BaseException as e:
            try:
                cur.execute("ROLLBACK")
            except Exception:
                self._drop_writer_connection()
                raise e from None
            if isinstance(e, self._dbapi_disconnects):
                self._drop_writer_connection()
            raise
        finally:
            self._local.used = time.monotonic()

    def _writer_connection(self) -> Any:
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is not None and getattr(conn, "broken", False):
            self._drop_writer_connection()
            conn = None
        if conn is not None and time.monotonic() - local.used > WRITER_IDLE_CHECK_S:
            # Idle for a while: the server may have dropped it. Check once
            # instead of on every commit (what pool_pre_ping would cost).
            try:
                local.cur.execute("SELECT 1")
                local.cur.fetchall()
            except Exception:
                self._drop_writer_connection()
                conn = None
        if conn is None:
            fairy = self.write_engine.raw_connection()
            conn = fairy.dbapi_connection
            fairy.detach()  # ours until dispose(); the pool keeps its own
            if self.dialect == "postgresql":
                conn.autocommit = True
            local.fairy, local.conn, local.cur = fairy, conn, conn.cursor()
            local.used = time.monotonic()
            with self._writers_lock:
                self._writers.append(fairy)
        return local.cur

    def _drop_writer_connection(self) -> None:
        fairy = getattr(self._local, "fairy", None)
        self._local.conn = self._local.fairy = None
        if fairy is not None:
            with self._writers_lock:
                if fairy in self._writers:
                    self._writers.remove(fairy)
            with suppress(Exception):
                fairy.close()

    @property
    def param(self) -> str:
        """The driver's placeholder, for prebuilt SQL."""
        return "?" if self.dialect == "sqlite" else "%s"

    def dispose(self) -> None:
        with self._writers_lock:
            writers, self._writers = self._writers, []
        for fairy in writers:
            with suppress(Exception):
                fairy.close()
        self._local = threading.local()
        self.read_engine.dispose()
        self.write_engine.dispose()


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    # Driver-level autocommit; transactions are begun explicitly (see begin hook).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit the API acknowledged survives a power loss.
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
    cur.close()


def _sqlite_begin_immediate(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE")

