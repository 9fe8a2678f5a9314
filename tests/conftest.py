from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from store import Store
from tests.fixtures import database_url, started_postgres
from tests.pg import TempPostgres
from tests.s3 import LocalS3
from tests.server import Server
from tests.store.helpers import Clock


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    """Plain HTTP to the module's ``server`` (each test folder defines its own)."""
    with httpx.Client(base_url=server.base, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def postgres() -> Iterator[TempPostgres]:
    pg = started_postgres()
    yield pg
    pg.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url(request, request.param, tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store(store_url)
    yield s
    s.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed(store_url: str, clock: Clock) -> Iterator[tuple[Store, Clock]]:
    """A store on ``clock`` (retention's tests move time by hand)."""
    s = Store(store_url, clock=clock)
    yield s, clock
    s.close()


@pytest.fixture(scope="session")
def s3() -> Iterator[LocalS3]:
    """A local S3-compatible server (moto), for warehouses on object storage."""
    local = LocalS3.start()
    yield local
    local.stop()
