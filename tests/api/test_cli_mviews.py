"""``sapwood mv …``: the installed executable against a running server (the
refresh here is PyIceberg's; ``sapwood mv refresh`` runs Spark and is tested
with the Spark tests)."""

from __future__ import annotations

import json
import re
import subprocess

from typer.testing import CliRunner

from cli.main import command
from tests.api.test_cli_versioning import run
from tests.api.test_mviews_http import append, base_table, refresh
from tests.fixtures import server_fixture
from tests.server import Server
from tests.zygote_client import run as sapwood

# The CLI speaks HTTP only: one SQLite-backed server is enough here (the
# HTTP tests cover both backends).
server = server_fixture(prefix="cli-mviews")


def status(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return sapwood(["mv", "status", *args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"},
                   timeout=60)


def untimed(freshness: dict) -> dict:
    """A freshness answer without what moves with the clock."""
    return {**freshness, "atMs": None, "staleForMs": None, "baseTables": [
        {**b, "changedAgoMs": None} for b in freshness["baseTables"]]}


def test_mv_verbs(server, http) -> None:
    server.catalog().create_namespace("shop")
    t = base_table(server, "shop")
    out = run(server, "mv", "create", "shop.a_only", "--sql",
              "SELECT id, v FROM shop.t WHERE v = 'a'", "-p", "max-staleness-ms=0")
    assert "created shop.a_only (version 1, not refreshed yet)" in out
    assert "full: never refreshed" in run(server, "mv", "plan", "shop.a_only")
    never = status(server)
    assert never.returncode == 1 and "never refreshed" in never.stdout, never.stdout
    refresh(server, http, "shop.a_only")
    fresh = status(server, "main", "--key", "shop.a_only")
    assert fresh.returncode == 0 and "fresh" in fresh.stdout, fresh.stdout + fresh.stderr
    planned = run(server, "mv", "plan", "shop.a_only")
    # The pinned commit as every table shows a hash (issue 44's trial: it was 64 hex).
    assert "none: fresh" in planned and re.search(r"\(base tables at main@[0-9a-f]{12}\)$",
                                                  planned.strip()), planned
    append(t, 1, start=50)
    stale = status(server)
    assert stale.returncode == 1 and "stale" in stale.stdout and "shop.t" in stale.stdout
    # --json: each view's freshness answer by its key; the same exit code.
    as_json = CliRunner().invoke(command(), ["mv", "status", "--json"],
                                 env={"SAPWOOD_URI": server.base})
    assert as_json.exit_code == 1, as_json.output
    answered = http.get("/api/v2/trees/main/materialized-views/shop.a_only/freshness").json()
    assert list(json.loads(as_json.stdout)) == ["shop.a_only"]
    assert untimed(json.loads(as_json.stdout)["shop.a_only"]) == untimed(answered)
    assert "incremental: only appends to shop.t" in run(server, "mv", "plan", "shop.a_only")
    shown = run(server, "mv", "show", "shop.a_only")
    assert "WHERE v = 'a'" in shown and "full" in shown
    assert "version 2" in run(server, "mv", "replace", "shop.a_only", "--sql",
                              "SELECT id, v FROM shop.t")
    assert "dropped shop.a_only" in run(server, "mv", "drop", "shop.a_only")
    err = run(server, "mv", "show", "shop.a_only", ok=False)
    assert "does not exist" in err
    err = run(server, "mv", "create", "shop.bad", "--sql", "SELECT x FROM shop.nothing",
              ok=False)
    assert "does not exist" in err
