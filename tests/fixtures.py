"""The suite's building blocks, one of each: a PostgreSQL server the suite
starts itself, the URL of a new catalog database on a backend, and the
factory of module servers (a real ``sapwood serve`` per module and backend,
with its settings, principals and warehouse as the module asks)."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pg import TempPostgres
from tests.server import Server, serving

REQUIRE_POSTGRES = os.environ.get("SAPWOOD_REQUIRE_POSTGRES") == "1"
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
# The backends plus a warehouse on object storage (a local S3-compatible
# server, SQLite catalog): for the modules that exercise real files.
WITH_S3 = [*BACKENDS, "s3"]
_names = itertools.count()


def started_postgres() -> TempPostgres:
    """A new PostgreSQL server (the session's, or a test's own to stop and
    start); without one, the test is skipped, or fails under
    SAPWOOD_REQUIRE_POSTGRES=1."""
    try:
        import psycopg  # noqa: F401

        pg = TempPostgres()
        pg.start()
    except (ImportError, RuntimeError) as e:
        if REQUIRE_POSTGRES:
            pytest.fail(f"SAPWOOD_REQUIRE_POSTGRES=1 but PostgreSQL is unavailable: {e}")
        pytest.skip(f"PostgreSQL unavailable: {e}")
    return pg


def database_url(request: pytest.FixtureRequest, backend: str, base: Path,
                 prefix: str = "t", migrated: bool = True) -> str:
    """A new, empty catalog database: a SQLite file in ``base``, or a
    database of its own on the session's PostgreSQL (an S3 warehouse's
    catalog is SQLite). ``migrated``: its schema already made (a copy of
    one this process migrated once; no rows, not even ``main``, which the
    first Store or server makes with its own clock), so that a thousand
    tests do not each run the migrations; False: nothing in it (the
    migrations' own tests)."""
    if backend in ("sqlite", "s3"):
        base.mkdir(parents=True, exist_ok=True)
        if migrated:
            shutil.copyfile(_sqlite_template(), base / "sapwood.db")
        return f"sqlite:///{base / 'sapwood.db'}"
    pg: TempPostgres = request.getfixturevalue("postgres")
    name = f"{prefix}{os.getpid()}_{next(_names)}"[:60]
    if not migrated:
        return pg.create_database(name)
    if pg not in _pg_templates:
        template = f"migrated_{os.getpid()}"
        _migrate(pg.create_database(template))
        _pg_templates[pg] = template
    return pg.create_database(name, template=_pg_templates[pg])


_pg_templates: dict[TempPostgres, str] = {}
_sqlite_file: list[Path] = []


def _migrate(url: str) -> None:
    from store.db import Database
    from store.migrate import upgrade

    db = Database(url)
    try:
        upgrade(db)
    finally:
        db.dispose()


def _sqlite_template() -> Path:
    """This process's migrated SQLite file (its WAL checkpointed into it as
    the last connection closed, so the one file is the whole database)."""
    if not _sqlite_file:
        path = Path(tempfile.mkdtemp(prefix="sapwood-template-")) / "sapwood.db"
        _migrate(f"sqlite:///{path}")
        assert not path.with_name("sapwood.db-wal").exists(), "the template's WAL remained"
        _sqlite_file.append(path)
    return _sqlite_file[0]


# Called with the new catalog's URL before its server starts (principals,
# grants ...); what it returns is the server's ``people``.
Prepare = Callable[[str], Any]
# Extra environment for the server, worked out per backend and folder.
Environment = Callable[[pytest.FixtureRequest, Path], dict[str, str]]


def server_fixture(backends: list[Any] | None = None, *, env: dict[str, str] | None = None,
                   prepare: Prepare | None = None, environment: Environment | None = None,
                   ready: Callable[[Server], None] | None = None, workers: int = 1,
                   prefix: str = "server", backend: Callable[[Any], str] = str) -> Any:
    """A module-scoped ``server`` fixture: one real server per backend in
    ``backends`` (default SQLite only), with ``env``, ``prepare``'s
    principals as ``server.people``, and for "s3" a warehouse on the local
    S3-compatible server; ``ready`` runs once it serves. ``backends`` may be
    other variants of the module's server, ``backend`` naming each one's
    backend. Any 5xx it logged fails the module."""

    @pytest.fixture(scope="module", params=backends or ["sqlite"])
    def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
               ) -> Iterator[Server]:
        kind = backend(request.param)
        base = tmp_path_factory.mktemp(prefix)
        url = database_url(request, kind, base, prefix[:8])
        people = prepare(url) if prepare is not None else None
        extra = {**(env or {}), **(environment(request, base) if environment else {})}
        kw: dict[str, Any] = {}
        s3 = request.getfixturevalue("s3") if kind == "s3" else None
        if s3 is not None:
            extra.update(s3.env)
            kw = {"warehouse": s3.warehouse(base.name), "client_props": s3.client_props}
        with serving(url, base, extra_env=extra, workers=workers, **kw) as srv:
            srv.people = people  # type: ignore[attr-defined]
            srv.s3 = s3  # type: ignore[attr-defined]
            if ready is not None:
                ready(srv)
            yield srv
        if s3 is not None:  # everything the server and its clients wrote is in the bucket
            assert s3.keys(f"{base.name}/")

    return server
