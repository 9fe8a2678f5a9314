from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from store import Store
from tests.s3 import LocalS3
from tests.server import Server, serving

_dbs = itertools.count()


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def database_url(request: pytest.FixtureRequest, base: Path, prefix: str = "api") -> str:
    """A new catalog database on the backend a fixture is parametrized with."""
    if request.param == "sqlite":
        return f"sqlite:///{base / 'sapwood.db'}"
    pg = request.getfixturevalue("postgres")
    return str(pg.create_database(f"{prefix}{os.getpid()}_{next(_dbs)}"))


# The backends plus a warehouse on object storage (a local S3-compatible
# server, SQLite catalog): for the modules that exercise real files.
WITH_S3 = [*BACKENDS, "s3"]


@contextmanager
def serving_on(request: pytest.FixtureRequest, base: Path) -> Iterator[Server]:
    """A server on the backend ``request`` is parametrized with (WITH_S3)."""
    if request.param != "s3":
        with serving(database_url(request, base), base) as srv:
            yield srv
        return
    s3: LocalS3 = request.getfixturevalue("s3")
    with serving(f"sqlite:///{base / 'sapwood.db'}", base, extra_env=s3.env,
                 warehouse=s3.warehouse(base.name), client_props=s3.client_props) as srv:
        srv.s3 = s3  # type: ignore[attr-defined]
        yield srv
    # Everything the server and its clients wrote is in the bucket.
    assert s3.keys(f"{base.name}/")


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[Server]:
    """One real server per test module and backend."""
    base = tmp_path_factory.mktemp("server")
    with serving(database_url(request, base), base) as srv:
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
