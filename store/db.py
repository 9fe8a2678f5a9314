"""Engines and transactions for SQLite (file, WAL) and PostgreSQL.

Two engines share one database: ``read`` runs each statement on its own
(immutable objects need no isolation), ``write`` wraps a unit of work in one
transaction. On SQLite a write transaction starts with BEGIN IMMEDIATE, so it
takes the write lock up front instead of failing on a lock upgrade.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.pool import NullPool

from core.errors import InvalidInputError
from store.connections import DedicatedConnections
from store.data_version import DataVersion
from store.faults import Faults

SQLITE_BUSY_TIMEOUT_S = 60
# Per process: commits on one branch serialize anyway; more would only hold
# database connections.
WRITER_CONNECTIONS = 8


def default_database_url(data_dir: str | os.PathLike[str]) -> str:
    return f"sqlite:///{Path(data_dir).resolve() / 'sapwood.db'}"


def shown_url(url: str) -> str:
    """The database URL as it may be printed or logged: no password."""
    return make_url(url).render_as_string(hide_password=True)


def catalog_missing(url: str) -> str | None:
    """Why ``url`` holds no catalog (None: it holds one, or the URL is not
    one ``Database`` takes, which then says why), found without creating
    anything: a SQLite file that is not there, a database without Sapwood's
    schema. The verbs that only use a catalog ask this before opening one,
    since opening creates it (store.migrate)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        path = parsed.database
        if not path or path == ":memory:":
            return None
        if not Path(path).is_file():
            return "no such file"
    elif backend == "postgresql":
        if parsed.drivername == "postgresql":
            url = parsed.set(drivername="postgresql+psycopg").render_as_string(
                hide_password=False)
    else:
        return None
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            found = inspect(conn).has_table("alembic_version")
    except OperationalError as e:
        return f"it cannot be opened: {str(e.orig).strip().splitlines()[0]}"
    finally:
        engine.dispose()
    return None if found else "it holds no Sapwood catalog"


class Database:
    def __init__(self, url: str) -> None:
        parsed = make_url(url)
        self.url = url
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
            self.watch: DataVersion | None = DataVersion(path, SQLITE_BUSY_TIMEOUT_S)
        elif self.dialect == "postgresql":
            if parsed.drivername == "postgresql":
                url = parsed.set(drivername="postgresql+psycopg").render_as_string(
                    hide_password=False)
            self.read_engine = create_engine(url, isolation_level="AUTOCOMMIT", pool_size=8,
                                             max_overflow=32, pool_pre_ping=True)
            self.write_engine = create_engine(url, pool_size=8, max_overflow=32,
                                              pool_pre_ping=True)
            self.watch = None
        else:
            raise InvalidInputError(f"unsupported database {parsed.drivername!r}: "
                                    "use sqlite:///file.db or postgresql://…")
        self._begin = "BEGIN IMMEDIATE" if self.dialect == "sqlite" else "BEGIN"
        self.writers = DedicatedConnections(self.write_engine, size=WRITER_CONNECTIONS,
                                            autocommit=self.dialect == "postgresql")
        # Reads outside transactions (each statement sees the latest commit).
        self.readers = DedicatedConnections(self.read_engine, size=WRITER_CONNECTIONS,
                                            autocommit=self.dialect == "postgresql")
        # What the driver raises, and the domain error each becomes when it
        # leaves these ways into the database (store.faults).
        self.faults = Faults(self.write_engine.dialect.loaded_dbapi, self.dialect)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        try:
            with self.read_engine.connect() as conn:
                yield conn
        except self.faults.driver as e:
            raise self.faults.of(e) from e

    @contextmanager
    def write(self) -> Iterator[Connection]:
        try:
            with self.write_engine.begin() as conn:
                yield conn
        except self.faults.driver as e:
            raise self.faults.of(e) from e

    @contextmanager
    def raw_write(self) -> Iterator[Any]:
        """One transaction on a dedicated writer connection, for the hot write
        path (prebuilt SQL, no statement compilation; see store.connections).
        Yields a cursor."""
        try:
            c = self.writers.acquire()
            broken = False
            try:
                c.cursor.execute(self._begin)
                yield c.cursor
                c.cursor.execute("COMMIT")
            except BaseException as e:
                broken = isinstance(e, self.faults.disconnects)
                try:
                    c.cursor.execute("ROLLBACK")
                except Exception:
                    broken = True
                    raise e from None
                raise
            finally:
                self.writers.release(c, broken)
        except self.faults.driver as e:
            raise self.faults.of(e) from e

    def run_statement(self, sql: str, params: tuple[object, ...]) -> int:
        """One statement that is atomic on its own (PostgreSQL: no BEGIN and
        COMMIT round trips), on a writer connection. Returns its rowcount."""
        try:
            c = self.writers.acquire()
            broken = False
            try:
                c.cursor.execute(sql, params)
                return int(c.cursor.rowcount)
            except self.faults.disconnects:
                broken = True
                raise
            finally:
                self.writers.release(c, broken)
        except self.faults.driver as e:
            raise self.faults.of(e) from e

    def raw_read(self, sql: str, params: tuple[object, ...]) -> list[Any]:
        """Rows of one prebuilt query on a dedicated reader connection: the
        per-request read (a ref's head) without SQLAlchemy's per-call cost. A
        PostgreSQL connection found dead is replaced and the query asked again."""
        try:
            for attempt in (1, 2):
                c = self.readers.acquire()
                broken = False
                try:
                    c.cursor.execute(sql, params)
                    return list(c.cursor.fetchall())
                except self.faults.connection_lost:
                    broken = True
                    if attempt == 2:
                        raise
                finally:
                    self.readers.release(c, broken)
        except self.faults.driver as e:
            raise self.faults.of(e) from e
        raise AssertionError("unreachable")

    @property
    def param(self) -> str:
        """The driver's placeholder, for prebuilt SQL."""
        return "?" if self.dialect == "sqlite" else "%s"

    def change_token(self) -> int | None:
        """Equal tokens at two moments: nothing was committed in between (by
        any process). None: unknown (PostgreSQL; store.data_version)."""
        return self.watch.token() if self.watch is not None else None

    def commit_token(self) -> object | None:
        """change_token's promise on PostgreSQL too, for one small query
        there: its current snapshot (the oldest running transaction, one
        past the newest ended, the ones running between), which differs once
        any transaction that wrote has ended since. None: unknown."""
        if self.dialect != "postgresql":
            return self.change_token()
        rows = self.raw_read("SELECT pg_current_snapshot()::text", ())
        return str(rows[0][0]) if rows else None

    def pools(self) -> dict[str, tuple[int, int]]:
        """Each engine's pooled connections: (in use, idle), by pool ("read",
        "write"); a pool that does not count them is left out."""
        out = {}
        for name, engine in (("read", self.read_engine), ("write", self.write_engine)):
            p: Any = engine.pool
            if hasattr(p, "checkedout"):
                out[name] = (int(p.checkedout()), int(p.checkedin()))
        return out

    def dispose(self) -> None:
        if self.watch is not None:
            self.watch.close()
        self.writers.dispose()
        self.readers.dispose()
        self.read_engine.dispose()
        self.write_engine.dispose()


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    # Driver-level autocommit; transactions are begun explicitly (see begin hook).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit the API acknowledged survives a power loss.
    cur.execute("PRAGMA synchronous=FULL")
    # Checkpoint every ~40 MB of WAL instead of ~4 MB: the hot pages (the ref
    # row, the tails of commits and reflog) are copied to the database once
    # per checkpoint however often they were rewritten, so fewer, larger
    # checkpoints cost far less per commit.
    cur.execute("PRAGMA wal_autocheckpoint=10000")
    # 16 MB of page cache per connection (SQLite's default is 2 MB): the
    # change index's posting lists are written at scattered places, and
    # re-reading their pages from the OS cost a third of a commit.
    cur.execute("PRAGMA cache_size=-16384")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
    cur.close()


def _sqlite_begin_immediate(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE")

