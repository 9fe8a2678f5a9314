from __future__ import annotations

import itertools
from collections.abc import Iterator

import httpx
import pytest

from store import Store
from tests.fixtures import BACKENDS, server_fixture
from tests.server import Server

_dbs = itertools.count()

# One real server per test module and backend (modules that need other
# settings define their own, from the same factory).
server = server_fixture(BACKENDS)


@pytest.fixture(scope="module")
def store(server: Server) -> Iterator[Store]:
    """The same catalog opened directly (to create branches, read hashes)."""
    s = Store(server.database_url)
    yield s
    s.close()


@pytest.fixture
def ns(http: httpx.Client, request: pytest.FixtureRequest) -> str:
    """A fresh namespace on main for one test."""
    name = f"{request.node.originalname[:50]}_{next(_dbs)}"
    r = http.post("/iceberg/v1/namespaces", json={"namespace": [name]})
    assert r.status_code == 200, r.text
    return name
