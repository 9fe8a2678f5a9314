"""The database verbs (fsck, gc, export, principal, grant, protect …) open a
catalog that is there, never create one, and say which one they opened; the
data directory is one setting (``--data-dir``, SAPWOOD_DATA_DIR) shared by
``serve`` and every database verb. The real ``sapwood`` command, on SQLite and
PostgreSQL (docs/cli.md)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect
from sqlalchemy.pool import NullPool

from tests.fixtures import BACKENDS, database_url
from tests.pg import free_port
from tests.server import wait_until_serving
from tests.zygote_client import run, spawn

# The verbs that use a catalog (each with what it needs besides the database).
USERS = [["fsck"], ["fsck", "--json"], ["gc", "--dry-run"], ["export", "-"],
         ["principal", "list"], ["principal", "create", "ana"], ["key", "create", "ana"],
         ["grant", "list"], ["grant", "add", "ana", "read"], ["protect", "main"]]
# Every verb that opens the database, and serve.
DATA_DIR_VERBS = [["serve"], ["init"], ["fsck"], ["gc"], ["export"], ["import"],
                  ["principal", "create"], ["principal", "list"], ["principal", "revoke"],
                  ["key", "create"], ["key", "revoke"], ["grant", "add"], ["grant", "list"],
                  ["grant", "revoke"], ["protect"], ["unprotect"]]


def _env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment with nothing of the suite's catalog settings."""
    return {"HOME": str(home), "SAPWOOD_DATA_DIR": "", "SAPWOOD_DATABASE_URL": "",
            "SAPWOOD_WAREHOUSE": "", "COLUMNS": "200", **extra}


def _sapwood(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run(args, env=env, timeout=120)


def _refused(proc: subprocess.CompletedProcess[str], url: str) -> None:
    """One error line naming the database looked for and what creates one."""
    assert proc.returncode == 1, (proc.args, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: no catalog at {url} ("), lines
    assert "sapwood init" in lines[0] and "--data-dir" in lines[0], lines
    assert proc.stdout == "", proc.stdout


def _tables(url: str) -> list[str]:
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return inspect(conn).get_table_names()
    finally:
        engine.dispose()


def test_a_verb_without_a_catalog_in_the_default_place_creates_none(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    url = f"sqlite:///{home / '.sapwood' / 'sapwood.db'}"
    for verb in USERS:
        _refused(_sapwood(verb, _env(home)), url)
    assert list(home.iterdir()) == []  # no ~/.sapwood, no empty catalog in it


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_verb_refuses_a_database_without_a_catalog(request: pytest.FixtureRequest,
                                                      tmp_path: Path, backend: str) -> None:
    url = database_url(request, backend, tmp_path / "db", "open", migrated=False)
    shown = url  # the suite's URLs have no password to hide
    for verb in USERS:
        _refused(_sapwood([*verb, "--database", url], _env(tmp_path)), shown)
    if backend == "sqlite":
        assert not (tmp_path / "db" / "sapwood.db").exists()
    else:
        assert _tables(url) == []  # no schema was made in the empty database
    # init creates it; then each verb opens it and names it on standard error.
    made = _sapwood(["init", "--database", url], _env(tmp_path))
    assert made.returncode == 0 and f"catalog ready at {shown}" in made.stdout, made.stderr
    checked = _sapwood(["fsck", "--json", "--database", url], _env(tmp_path))
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["ok"] is True  # --json stays one document
    assert checked.stderr.splitlines() == [f"database: {shown}"]
    listed = _sapwood(["principal", "list", "--database", url], _env(tmp_path))
    assert listed.returncode == 0 and listed.stderr.splitlines() == [f"database: {shown}"]


def test_data_dir_is_one_setting_for_serve_and_every_database_verb(tmp_path: Path) -> None:
    data = tmp_path / "catalog"
    url = f"sqlite:///{data / 'sapwood.db'}"
    warehouse = (data / "warehouse").resolve().as_uri()
    home = tmp_path / "home"
    home.mkdir()
    # serve --data-dir creates the catalog there and says so.
    port = free_port()
    log = tmp_path / "serve.log"
    proc = spawn(["serve", "--port", str(port), "--data-dir", str(data)],
                 {**os.environ, **_env(home)}, log)
    try:
        wait_until_serving(proc, f"http://127.0.0.1:{port}", log)
        said = log.read_text().splitlines()[0]
        assert said == (f"Sapwood: database {url}, warehouse {warehouse}, "
                        "authentication off"), said
    finally:
        proc.terminate()
        proc.wait(30)
    # The database verbs find it by the same option, or by the variable.
    fsck = _sapwood(["fsck", "--data-dir", str(data)], _env(home))
    assert fsck.returncode == 0 and fsck.stdout.splitlines()[-1] == "ok", fsck.stderr
    assert fsck.stderr.splitlines() == [f"database: {url}"]
    gc = _sapwood(["gc", "--dry-run"], _env(home, SAPWOOD_DATA_DIR=str(data)))
    assert gc.returncode == 0, gc.stderr
    assert gc.stderr.splitlines() == [f"database: {url}, warehouse: {warehouse}"]
    exported = _sapwood(["export", "-", "--data-dir", str(data)], _env(home))
    assert exported.returncode == 0 and exported.stdout.startswith('{"format"'), exported.stderr
    assert exported.stderr.splitlines()[0] == f"database: {url}"
    assert list(home.iterdir()) == []  # nothing was made in the default place


def test_every_database_verb_documents_the_data_dir(tmp_path: Path) -> None:
    for verb in DATA_DIR_VERBS:
        helped = _sapwood([*verb, "--help"], _env(tmp_path))
        assert helped.returncode == 0, helped.stderr
        text = " ".join(helped.stdout.split())
        assert "--data-dir" in text and "SAPWOOD_DATA_DIR" in text, (verb, helped.stdout)
        if verb != ["serve"]:
            assert "--database" in text, (verb, helped.stdout)
