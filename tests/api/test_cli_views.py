"""``sapwood view deps|dependents|lineage`` and ``sapwood views check``, the
installed executable against a running server; and the CLI with a credential
against a server with authentication on."""

from __future__ import annotations

import os
import subprocess

import httpx

from tests.api import spark_bodies as sb
from tests.api.auth_setup import set_up
from tests.api.test_cli_versioning import run
from tests.fixtures import server_fixture
from tests.server import sapwood_command, serving

V1 = "/iceberg/v1"


# The CLI speaks HTTP only: one SQLite-backed server is enough here (the
# HTTP tests cover both backends).
server = server_fixture(prefix="cli-views")


def view(http: httpx.Client, ns: str, name: str, sql: str) -> None:
    body = sb.create_view(name, sql)
    body["view-version"]["default-namespace"] = [ns]
    r = http.post(f"{V1}/namespaces/{ns}/views", json=body)
    assert r.status_code == 200, r.text


def test_view_verbs(server, http) -> None:
    http.post(f"{V1}/namespaces", json={"namespace": ["shop"]})
    http.post(f"{V1}/namespaces/shop/tables", json=sb.create_table("orders"))
    http.post(f"{V1}/namespaces/shop/tables", json=sb.create_table("old"))
    view(http, "shop", "daily", "SELECT id, upper(name) AS name FROM orders")
    view(http, "shop", "top", "SELECT id, name FROM daily")
    view(http, "shop", "stale", "SELECT id, name FROM old")
    deps = run(server, "view", "deps", "shop.top")
    assert "shop.top: ok" in deps and "shop.daily" in deps and "shop.orders" in deps
    dependents = run(server, "view", "dependents", "shop.orders")
    assert "shop.daily" in dependents and "shop.top" in dependents
    lineage = run(server, "view", "lineage", "shop.top")
    assert "shop.orders.name" in lineage and "yes" in lineage
    assert "2 views" not in run(server, "views", "check")  # all hold: exit 0
    assert "unchanged (version 1)" in run(server, "view", "recompile", "shop.daily")
    added = run(server, "view", "transpile", "shop.daily", "--from", "spark", "--to", "trino")
    assert "version 2 adds trino" in added and "UPPER(name)" in added
    http.delete(f"{V1}/namespaces/shop/tables/old")
    proc = subprocess.run([*sapwood_command(), "views", "check", "main"], capture_output=True,
                          text=True, env={**os.environ, "SAPWOOD_URI": server.base,
                                          "COLUMNS": "200"}, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "shop.stale: invalid" in proc.stdout and "table shop.old dropped" in proc.stdout


def test_the_cli_sends_its_credential(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'sapwood.db'}"
    people = set_up(url)
    with serving(url, tmp_path, {"SAPWOOD_AUTH": "1"}) as srv:
        env = {**os.environ, "SAPWOOD_URI": srv.base, "COLUMNS": "200"}
        denied = subprocess.run([*sapwood_command(), "branch", "list"], capture_output=True,
                                text=True, env=env, timeout=60)
        assert denied.returncode == 1 and "Authentication required" in denied.stderr
        ok = subprocess.run([*sapwood_command(), "branch", "list"], capture_output=True,
                            text=True, env={**env, "SAPWOOD_CREDENTIAL": people.keys["reader"]},
                            timeout=60)
        assert ok.returncode == 0 and "main" in ok.stdout, ok.stderr
