"""Protected branches hold whether authentication is on or off
(docs/security.md): served open, a protected ``main`` still refuses direct
commits (Iceberg writes, versioning commits, restores through ``sapwood
restore``) and takes merges. And ``sapwood serve`` will not serve a catalog
that has principals open unless told to (``--no-auth``): with no auth
setting it refuses to start, naming ``--auth``. Real servers, plain HTTP and
the real ``sapwood`` command, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from store import Store
from tests.api import spark_bodies as sb
from tests.api.auth_setup import set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.pg import free_port
from tests.server import Server
from tests.zygote_client import run

V2 = "/api/v2"
PROTECTED = "Branch 'main' is protected: direct commits are refused"


def _protect_main(url: str) -> None:
    """``sapwood protect main`` on a catalog with no principals: served open."""
    s = Store(url)
    try:
        s.auth.protect("main")
    finally:
        s.close()


server = server_fixture(BACKENDS, prepare=_protect_main, prefix="prot-open")
# Principals and a protected main (sapwood init --auth's kind), served open
# because --no-auth said so (SAPWOOD_AUTH=0 is what the flag sets).
chosen_open = server_fixture(env={"SAPWOOD_AUTH": "0"}, prepare=set_up, prefix="prot-noauth")


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    with http_client(base_url=server.base, timeout=30) as client:
        yield client


def head(http: httpx.Client, ref: str) -> str:
    r = http.get(f"{V2}/trees/{ref}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def refused(r: httpx.Response) -> None:
    assert r.status_code == 403, r.text
    assert PROTECTED in r.text, r.text  # each API in its own error shape


def test_open_protected_main_refuses_direct_commits_and_takes_merges(server, http) -> None:
    start = head(http, "main")
    refused(http.post("/iceberg/main/v1/namespaces", json={"namespace": ["shop"]}))
    refused(http.post(f"{V2}/trees/main@{start}/history/commit", json={
        "commitMeta": {"message": "direct"},
        "operations": [{"type": "PUT", "key": {"elements": ["shop"]},
                        "content": {"type": "NAMESPACE", "elements": ["shop"]}}]}))
    assert head(http, "main") == start

    # The way in: a branch, then a merge.
    r = http.post(f"{V2}/trees", params={"name": "etl", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": start})
    assert r.status_code == 200, r.text
    assert http.post("/iceberg/etl/v1/namespaces", json={"namespace": ["shop"]}).status_code == 200
    r = http.post("/iceberg/etl/v1/namespaces/shop/tables", json=sb.create_table("t"))
    assert r.status_code == 200, r.text
    r = http.post(f"{V2}/trees/main/history/merge", json={"fromRefName": "etl"})
    assert r.status_code == 200, r.text
    merged = head(http, "main")
    assert merged != start

    # sapwood restore on main, as the newcomer's trial did: refused, nothing written.
    out = run(["restore", "shop.t", "--from", "main~1", "--yes"],
              env={"SAPWOOD_URI": server.base}, timeout=60)
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert PROTECTED in out.stderr, out.stderr
    assert head(http, "main") == merged
    # On the unprotected branch the same restore is a commit.
    out = run(["restore", "shop.t", "--from", "etl~1", "-r", "etl", "--yes"],
              env={"SAPWOOD_URI": server.base}, timeout=60)
    assert out.returncode == 0, (out.stdout, out.stderr)


def test_no_auth_chosen_serves_open_and_main_stays_protected(chosen_open: Server) -> None:
    with http_client(base_url=chosen_open.base, timeout=30) as http:
        # No credential needed: open, as --no-auth asked.
        assert http.get("/iceberg/main/v1/namespaces").status_code == 200
        start = head(http, "main")
        refused(http.post("/iceberg/main/v1/namespaces", json={"namespace": ["x"]}))
        assert head(http, "main") == start


def test_serve_refuses_a_catalog_with_principals_without_an_auth_setting(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    set_up(url)
    out = run(["serve", "--port", str(free_port()), "--database", url],
              env={"SAPWOOD_DATA_DIR": str(tmp_path), "SAPWOOD_AUTH": ""}, timeout=60)
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: this catalog has principals ("), lines
    assert "--auth" in lines[0] and "--no-auth" in lines[0], lines
