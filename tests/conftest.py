from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import httpx
import pytest

from store import Store
from tests.pg import TempPostgres
from tests.s3 import LocalS3
from tests.server import Server

REQUIRE_POSTGRES = os.environ.get("SAPWOOD_REQUIRE_POSTGRES") == "1"
_db_counter = itertools.count()


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    """Plain HTTP to the module's ``server`` (each test folder defines its own)."""
    with httpx.Client(base_url=server.base, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def postgres() -> Iterator[TempPostgres]:
    try:
        import psycopg  # noqa: F401

        pg = TempPostgres()
        pg.start()
    except (ImportError, RuntimeError) as e:
        if REQUIRE_POSTGRES:
            pytest.fail(f"SAPWOOD_REQUIRE_POSTGRES=1 but PostgreSQL is unavailable: {e}")
        pytest.skip(f"PostgreSQL unavailable: {e}")
    yield pg
    pg.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sapwood.db'}"
    pg: TempPostgres = request.getfixturevalue("postgres")
    return pg.create_database(f"t{os.getpid()}_{next(_db_counter)}")


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store(store_url)
    yield s
    s.close()


@pytest.fixture(scope="session")
def s3() -> Iterator[LocalS3]:
    """A local S3-compatible server (moto), for warehouses on object storage."""
    local = LocalS3.start()
    yield local
    local.stop()
