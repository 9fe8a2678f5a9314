"""Mistakes are not answered 'ok' (docs/undo.md, docs/cli.md): a restore of
a key that exists at neither side is an error naming it (a key the caller
may not read answers as one that is not there); a restore that would delete
keys needs ``--yes``; and after a ``DROP VIEW`` the views that still read the
name can be asked for, and the drop's commit and event say which it left
invalid. The real ``sapwood`` command and plain HTTP against real servers,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, with_principals
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.test_view_analysis_http import make
from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run

GRANTS = {
    "admin": [(p, "*", ()) for p in ("read", "write", "create-reference")],
    # Writes all of main but reads only namespace 'open' there; reads the tag whole.
    "fixer": [("read", "keep*", ()), ("read", "main", ("open",)), ("write", "main", ())],
}
# A catalog with authentication on, for what a caller may not read (SQLite:
# the grants are the server's, not the store's).
secured = server_fixture(prefix="mistakes", env={"SAPWOOD_AUTH": "1"},
                         prepare=lambda url: with_principals(url, GRANTS))


def sapwood(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"}, timeout=60)


def _restore(http: httpx.Client, keys: list[str], source: str, dry_run: bool,
             **kw: Any) -> httpx.Response:
    return http.post(f"/api/v2/trees/main@{head(http, 'main')}/history/restore", json={
        "source": source, "dryRun": dry_run,
        "keys": [{"elements": k.split(".")} for k in keys]}, **kw)


def test_restoring_a_key_that_exists_nowhere_is_an_error(server, http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    before = head(http, "main")
    out = sapwood(server, "restore", f"{ns}.nope", "--from", "main~1")
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert out.stderr.splitlines() == [
        f"error: key '{ns}.nope' exists neither at 'main~1' nor on 'main': "
        "nothing to restore"], out.stderr
    for dry_run in (True, False):
        # With a key that does exist beside it: the answer names only the missing one.
        r = _restore(http, [f"{ns}.t", f"{ns}.nope"], "main~1", dry_run)
        assert r.status_code == 404, r.text
        assert r.json()["message"] == (f"key '{ns}.nope' exists neither at 'main~1' nor on "
                                       "'main': nothing to restore")
    assert head(http, "main") == before


def test_a_restore_that_deletes_needs_yes(server, http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t"))
    before_view = head(http, "main")
    make(http, ns, "v", "SELECT id FROM t")
    now = head(http, "main")
    asked = sapwood(server, "restore", f"{ns}.v", "--from", f"main@{before_view}")
    assert asked.returncode == 1, asked.stdout
    assert asked.stdout.splitlines()[0].startswith(f"would delete {ns}.v  from main@"), \
        asked.stdout
    assert asked.stderr.splitlines() == [
        f"error: restore would delete {ns}.v (absent at main@{before_view}); run it again "
        "with --yes to delete, nothing was written"], asked.stderr
    assert head(http, "main") == now
    assert http.get(f"/api/v2/trees/main/contents/{ns}.v").status_code == 200
    # The dry run says so and exits 0; --yes deletes it.
    dry = sapwood(server, "restore", f"{ns}.v", "--from", f"main@{before_view}", "--dry-run")
    assert dry.returncode == 0 and "would delete" in dry.stdout, dry.stderr
    done = sapwood(server, "restore", f"{ns}.v", "--from", f"main@{before_view}", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(f"deleted   {ns}.v"), done.stdout
    assert http.get(f"/api/v2/trees/main/contents/{ns}.v").status_code == 404
    # A restore that deletes nothing needs no --yes.
    back = sapwood(server, "restore", f"{ns}.v", "--from", f"main@{now}")
    assert back.returncode == 0 and back.stdout.startswith(f"revived   {ns}.v"), back.stderr


def test_a_dropped_view_still_answers_what_read_it(server, http, ns) -> None:
    http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("orders"))
    make(http, ns, "revenue", "SELECT id, name FROM orders")
    make(http, ns, "big", "SELECT id, name FROM revenue")
    make(http, ns, "top", "SELECT id FROM big")
    make(http, ns, "lone", "SELECT id FROM orders")
    # DROP VIEW, as Spark sends it: lenient, so it lands.
    assert http.delete(f"{V1}/namespaces/{ns}/views/revenue").status_code == 204
    dropped = head(http, "main")
    gone = http.get(f"/api/v2/trees/main/contents/{ns}.revenue/dependents")
    assert gone.status_code == 200, gone.text
    assert gone.json()["exists"] is False and gone.json()["contentId"] is None
    assert [(".".join(d["key"]), d["depth"], d["status"]) for d in gone.json()["dependents"]
            ] == [(f"{ns}.big", 1, "invalid"), (f"{ns}.top", 2, gone.json()["dependents"][1][
                "status"])]
    shown = sapwood(server, "view", "dependents", f"{ns}.revenue")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"{ns}.revenue does not exist at main; 2 views read it still"
    assert [line.split("\t")[1] for line in lines[2:]] == [f"{ns}.big", f"{ns}.top"], lines
    # The drop's commit and its event record what it left invalid.
    log = http.get("/api/v2/trees/main/history", params={"maxRecords": 1}).json()
    meta = log["logEntries"][0]["commitMeta"]
    assert meta["hash"] == dropped and meta["message"] == f"drop view {ns}.revenue"
    assert meta["allProperties"]["sapwood.invalidated-views"] == [
        json.dumps([f"{ns}.big", f"{ns}.top"])]
    events = http.get("/api/v2/events", params={"ref": "main", "key": f"{ns}.revenue",
                                                 "maxRecords": 1000}).json()
    drop = [op for e in events["events"] for c in e["data"]["commits"]
            for op in c["operations"] if c["hash"] == dropped]
    assert drop == [{"key": [ns, "revenue"], "op": "DELETE",
                     "invalidatedViews": [[ns, "big"], [ns, "top"]]}], drop
    # A drop that breaks nothing records nothing.
    assert http.delete(f"{V1}/namespaces/{ns}/views/lone").status_code == 204
    meta = http.get("/api/v2/trees/main/history", params={"maxRecords": 1}).json()[
        "logEntries"][0]["commitMeta"]
    assert "sapwood.invalidated-views" not in meta["allProperties"]
    nothing = sapwood(server, "view", "dependents", f"{ns}.lone")
    assert nothing.stdout == f"{ns}.lone does not exist at main; no view reads it\n"


def test_a_key_the_caller_may_not_read_answers_as_missing(secured: Server) -> None:
    people: People = secured.people  # type: ignore[attr-defined]
    with http_client(base_url=secured.base, headers=people.headers("admin")) as admin:
        for name in ("open", "closed"):
            assert admin.post(f"{V1}/namespaces", json={"namespace": [name]}).status_code == 200
        r = admin.post("/api/v2/trees?name=keep", json={
            "type": "BRANCH", "name": "main", "hash": head(admin, "main")})
        assert r.status_code == 200, r.text
        admin.post(f"{V1}/namespaces/closed/tables", json=sb.create_table("secret"))
    with http_client(base_url=secured.base, headers=people.headers("fixer")) as fixer:
        said = {}
        for key in ("closed.secret", "closed.nothing", "open.nothing"):
            r = _restore(fixer, [key], "keep", True)
            assert r.status_code == 404, r.text
            said[key] = r.json()["message"].replace(key, "KEY")
        # The hidden table answers exactly as keys that are not there.
        assert len(set(said.values())) == 1, said
