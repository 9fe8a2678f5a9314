"""Listings a person reads at 100 columns (docs/cli.md, "What it prints"):
tables show 12-character hashes and instants to the millisecond (``--full``
and ``--json`` keep whole values), counts are pluralised, an empty listing
says so in a sentence, and on a 100-column terminal a table is drawn with
its free text wrapping in its cell, never cut. The real ``sapwood`` command
against real servers."""

from __future__ import annotations

import re
import subprocess

import httpx

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.test_view_analysis_http import make
from tests.fixtures import server_fixture
from tests.server import Server
from tests.zygote_client import run

# The CLI speaks HTTP only: one SQLite-backed server is enough here (the
# HTTP tests cover both backends); "bare" holds nothing but main.
server = server_fixture(prefix="cli-list")
bare = server_fixture(prefix="cli-bare")

SHORT = re.compile(r"[0-9a-f]{12}")
MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LONG = ("replace the view with one that keeps only the ids above ten, because the weekly "
        "report asked for it and said so at length")


def sapwood(server: Server, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200", **env}, timeout=60)


def ok(server: Server, *args: str, **env: str) -> str:
    out = sapwood(server, *args, **env)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out.stdout


def _history(http: httpx.Client, ns: str) -> list[dict[str, str]]:
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t")).status_code == 200
    uuid = make(http, ns, "v", "SELECT id FROM t")["view-uuid"]
    r = http.post(f"{V1}/namespaces/{ns}/views/v",
                  json=sb.replace_view(uuid, f"SELECT id, name FROM {ns}.t WHERE id > 10"),
                  headers={"Sapwood-Commit-Message": LONG})
    assert r.status_code == 200, r.text
    log = http.get("/api/v2/trees/main/history", params={"maxRecords": 3}).json()
    return [e["commitMeta"] for e in log["logEntries"]]


def test_tables_show_short_hashes_and_milliseconds(server, http, ns) -> None:
    commits = _history(http, ns)
    lines = ok(server, "log", "--limit", "3").splitlines()
    assert lines[0] == "hash\ttime\tauthor\tmessage"
    for line, meta in zip(lines[1:], commits, strict=True):
        h, t, _, message = line.split("\t")
        assert SHORT.fullmatch(h) and meta["hash"].startswith(h), line
        assert MS.fullmatch(t) and meta["commitTime"].startswith(t[:-1]), line
        assert message == meta["message"]
    # --full: whole values, as the API has them.
    whole = ok(server, "log", "--limit", "3", "--full").splitlines()[1:]
    assert [tuple(line.split("\t")[:2]) for line in whole] == [
        (m["hash"], m["commitTime"]) for m in commits]
    refs = ok(server, "branch", "list").splitlines()
    assert refs[0] == "name\thash" and f"main\t{head(http, 'main')[:12]}" in refs
    assert f"main\t{head(http, 'main')}" in ok(server, "branch", "list", "--full").splitlines()
    versions = ok(server, "view", "history", f"{ns}.v").splitlines()
    # Each version current until the next: no "until" column to say so.
    assert versions[0] == "version\tcurrent from\tauthor\tcommit\tmessage", versions
    assert [row.split("\t")[3] for row in versions[1:]] == [commits[1]["hash"][:12],
                                                            commits[0]["hash"][:12]]
    assert all(MS.fullmatch(row.split("\t")[1]) for row in versions[1:]), versions
    last = ok(server, "events", "-r", "main").splitlines()[-1].split()
    assert MS.fullmatch(last[1]) and last[5] == commits[0]["hash"][:12], last
    whole_events = ok(server, "events", "-r", "main", "--full").splitlines()[-1].split()
    assert whole_events[5] == commits[0]["hash"], whole_events


def test_a_table_on_a_100_column_terminal(server, http, ns) -> None:
    commits = _history(http, ns)
    terminal = {"TTY_COMPATIBLE": "1", "COLUMNS": "100"}
    for args in (("log", "--limit", "3"), ("view", "history", f"{ns}.v")):
        drawn = ANSI.sub("", ok(server, *args, **terminal)).splitlines()
        assert drawn[0].startswith("┏"), drawn
        assert max(len(line) for line in drawn) <= 100, drawn
        assert f"│ {commits[0]['hash'][:12]} │" in "\n".join(drawn), drawn
        # The long message wraps inside its cell; every word of it is there.
        cells = " ".join(line.rsplit("│", 2)[-2].strip() for line in drawn if "│" in line)
        assert LONG in cells, cells


def test_counts_are_pluralised(server, http, ns) -> None:
    views = len(http.get("/api/v2/trees/main/views").json()["views"])
    make(http, ns, "only", "SELECT 1 AS x")
    # A branch with exactly one view: this test's.
    solo = f"solo_{ns[-8:]}"
    assert ok(server, "branch", "create", solo).startswith(f"created branch {solo} at ")
    assert ok(server, "view", "check") == f"{views + 1} views, 0 not ok\n"
    for key in [v["key"] for v in http.get("/api/v2/trees/main/views").json()["views"]]:
        if key != [ns, "only"]:
            assert http.delete(f"/iceberg/{solo}/v1/namespaces/{key[0]}/views/{key[1]}"
                               ).status_code == 204
    assert ok(server, "view", "check", "-r", solo) == "1 view, 0 not ok\n"


def test_an_empty_listing_says_so(bare: Server) -> None:
    assert ok(bare, "tag", "list") == "no tags\n"
    assert ok(bare, "view", "check") == "no views on main\n"
    assert ok(bare, "mv", "status") == "no materialized views on main\n"
    assert ok(bare, "webhook", "list") == "no webhooks\n"
    assert ok(bare, "events", "-r", "nothing") == "no events on nothing\n"
    assert ok(bare, "log", "--key", "a.b") == "no commits on main match\n"
    assert ok(bare, "diff", "main", "main") == "no differences between main and main\n"
    with httpx.Client(base_url=bare.base) as http:
        assert http.post(f"{V1}/namespaces", json={"namespace": ["e"]}).status_code == 200
        assert http.post(f"{V1}/namespaces/e/tables", json=sb.create_table("t")
                         ).status_code == 200
    assert ok(bare, "view", "dependents", "e.t") == "no view reads e.t at main\n"
