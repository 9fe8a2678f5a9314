from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import httpx
import pytest

from store import Store
from tests.server import Server, serving

_dbs = itertools.count()


@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[Server]:
    """One real server per test module and backend."""
    base = tmp_path_factory.mktemp("server")
    if request.param == "sqlite":
        url = f"sqlite:///{base / 'sapwood.db'}"
    else:
        pg = request.getfixturevalue("postgres")
        url = pg.create_database(f"api{os.getpid()}_{next(_dbs)}")
    with serving(url, base) as srv:
        yield srv


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
