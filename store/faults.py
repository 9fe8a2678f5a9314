"""The database driver's failures as the domain's (core.errors'
``DatabaseFailure``), so that nothing of SQLAlchemy, sqlite3 or psycopg is
raised above store/.

``Database`` (store.db) turns what its driver raises into one of these at
each way into the database (a read, a transaction, a prebuilt statement),
once the store's own handling of it is done (a PostgreSQL connection found
dead and replaced, a reference that already exists):

- the database does not answer (an OperationalError or InterfaceError of
  SQLAlchemy or of the driver, a pool timeout, a connection SQLAlchemy
  found invalid — which includes SQLite locked past its busy timeout and a
  transaction PostgreSQL could not serialize): ``DatabaseUnavailableError``,
  a 503 with Retry-After; a PostgreSQL connection lost in a write is
  ``ConnectionLostError``, which the writer plans again (store.writes);
- anything else the database refuses: ``DatabaseError``, a bug (500), named
  by the driver's class alone.

Constraint violations the store expects (a reference that already exists)
are caught where they happen and raised as what they mean.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exc

from core.errors import DatabaseError, DatabaseFailure, DatabaseUnavailableError


class ConnectionLostError(DatabaseUnavailableError):
    """A PostgreSQL connection broke under a write: whether the write landed
    is unknown (store.writes plans it again on a new connection)."""


class Faults:
    """One database's driver errors, and the domain error each becomes."""

    def __init__(self, dbapi: Any, dialect: str) -> None:
        # Caught at the store's ways into the database: SQLAlchemy's and the
        # driver's own (the hot paths use the driver directly).
        self.driver: tuple[type[BaseException], ...] = (exc.SQLAlchemyError, dbapi.Error)
        self.unavailable: tuple[type[BaseException], ...] = (
            exc.OperationalError, exc.InterfaceError, exc.TimeoutError,
            dbapi.OperationalError, dbapi.InterfaceError)
        # After these a PostgreSQL connection is not trusted again, and a
        # write on it may or may not have landed (SQLite has no connection
        # to lose: its OperationalErrors are locks).
        self.disconnects: tuple[type[BaseException], ...] = (
            dbapi.OperationalError, dbapi.InterfaceError)
        self.connection_lost: tuple[type[BaseException], ...] = (
            self.disconnects if dialect == "postgresql" else ())

    def of(self, e: BaseException) -> DatabaseFailure:
        """The domain error for driver error ``e`` (raised ``from`` it)."""
        cause = type(e).__name__
        if isinstance(e, self.connection_lost):
            return ConnectionLostError(cause)
        if isinstance(e, self.unavailable) or (
                isinstance(e, exc.DBAPIError) and e.connection_invalidated):
            return DatabaseUnavailableError(cause)
        return DatabaseError(cause)
