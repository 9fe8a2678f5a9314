"""The database's failures leave the store as core.errors' DatabaseFailure
(store.faults), never as SQLAlchemy's, sqlite3's or psycopg's: a database
that stops answering is DatabaseUnavailableError (a 503 with Retry-After
above), a statement it refuses unexpectedly is DatabaseError (a bug, told
by the driver's class alone); a refusal the store expects is what it means
(a reference that exists already). On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from core.commits import CommitMeta
from core.errors import (
    DatabaseError,
    DatabaseFailure,
    DatabaseUnavailableError,
    ReferenceAlreadyExistsError,
    SapwoodError,
)
from store import Store
from tests.fixtures import started_postgres
from tests.pg import TempPostgres
from tests.store.helpers import with_ns

DRIVERS = ("sqlalchemy", "sqlite3", "psycopg")


def _is_driver_error(e: BaseException) -> bool:
    return type(e).__module__.split(".")[0] in DRIVERS


def test_a_refused_statement_is_a_database_failure_naming_no_sql(store: Store) -> None:
    # The webhooks' table dropped behind the store's back: the next read of
    # it is refused by the database.
    engine = sqlalchemy.create_engine(store.db.url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE webhooks")
    finally:
        engine.dispose()
    with pytest.raises(DatabaseFailure) as caught:
        store.webhooks.all()
    e = caught.value
    assert not isinstance(e, SapwoodError)  # no handler of a request's failures takes it
    assert not _is_driver_error(e)
    # What a client is told names no statement, table or value; the
    # driver's error stays the cause (the server's log shows it).
    for internal in ("webhooks", "SELECT", "select", "sqlalchemy", "sqlite", "psycopg"):
        assert internal not in e.message, e.message
    assert e.__cause__ is not None and _is_driver_error(e.__cause__)
    assert e.cause == type(e.__cause__).__name__
    # SQLite says a missing table as an OperationalError (which is also how
    # it says "locked"), PostgreSQL as a ProgrammingError: a bug.
    if store.db.dialect == "postgresql":
        assert type(e) is DatabaseError and e.message == "ProgrammingError"


def test_a_refusal_the_store_expects_is_what_it_means(store: Store) -> None:
    store.create_reference("dev")
    with pytest.raises(ReferenceAlreadyExistsError, match="'dev'"):
        store.create_reference("dev")
    assert [r.name for r in store.list_references().items] == ["dev", "main"]


@pytest.fixture
def own_postgres() -> Iterator[TempPostgres]:
    """A server of this test's own: it is stopped and started again."""
    pg = started_postgres()
    yield pg
    pg.stop()


@pytest.mark.postgres
def test_a_stopped_database_is_unavailable_until_it_is_back(own_postgres: TempPostgres,
                                                            tmp_path: Path) -> None:
    store = Store(own_postgres.create_database("faults"))
    try:
        with_ns(store, "main", "ns")
        head = store.get_reference("main").hash
        own_postgres.halt()
        try:
            reads = (store.list_references, lambda: store.log("main"),
                     lambda: store.entries("main"))
            writes = (lambda: store.create_reference("dev"),
                      lambda: store.commit("main", [], CommitMeta("empty"), expected_hash=head))
            for call in (*reads, *writes):
                with pytest.raises(DatabaseUnavailableError) as caught:
                    call()
                e = caught.value
                assert not _is_driver_error(e)
                assert e.message == "the catalog database is unavailable; retry later"
                assert e.retry_after_s > 0
        finally:
            own_postgres.resume()
        # The same store again, its broken connections replaced.
        assert store.get_reference("main").hash == head
        assert store.create_reference("dev").hash == head
    finally:
        store.close()
