"""One spelling for a reference (docs/cli.md, "One spelling for a
reference"): every verb that reads or changes a reference takes it as
``--ref/-r``, and ``--into``/``--onto`` name only a merge's and a
transplant's target; the spellings verbs had before (``sapwood log dev``,
``view check dev``, ``mv status dev``, ``--branch/-b``) still work, once
each here, and are hidden from the help. The real ``sapwood`` command
against a real server."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import httpx
import typer

from cli.main import command
from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.test_view_analysis_http import make
from tests.fixtures import server_fixture
from tests.server import Server
from tests.zygote_client import run

# The CLI speaks HTTP only: one SQLite-backed server is enough here (the
# HTTP tests cover both backends).
server = server_fixture(prefix="cli-ref")


def sapwood(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"}, timeout=60)


def ok(server: Server, *args: str) -> str:
    out = sapwood(server, *args)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out.stdout


def _dev(http: httpx.Client, ns: str) -> str:
    """main: table t, view v reading it; dev: v replaced, and view w (and
    materialized view m) on dev only."""
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("t")).status_code == 200
    uuid = make(http, ns, "v", "SELECT id FROM t")["view-uuid"]
    dev = f"dev_{ns[-8:]}"
    r = http.post(f"/api/v2/trees?name={dev}",
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    body = sb.replace_view(uuid, f"SELECT id, name FROM {ns}.t")
    r = http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views/v", json=body)
    assert r.status_code == 200, r.text
    body = sb.create_view("w", "SELECT name FROM t")
    body["view-version"]["default-namespace"] = [ns]
    assert http.post(f"/iceberg/{dev}/v1/namespaces/{ns}/views", json=body).status_code == 200
    return dev


def test_every_verb_takes_its_reference_as_dash_r(server, http, ns) -> None:
    dev = _dev(http, ns)
    shown = ok(server, "show", f"{ns}.v", "-r", dev)
    assert f"SELECT id, name FROM {ns}.t" in shown and f"at {dev}:" in shown
    assert "SELECT id FROM t" in ok(server, "show", f"{ns}.v")
    assert f"create view {ns}.w" in ok(server, "log", "-r", dev)
    assert f"create view {ns}.w" not in ok(server, "log")
    assert f"create view {ns}.w" in ok(server, "log", "--ref", dev)
    history = ok(server, "view", "history", f"{ns}.v", "-r", dev).splitlines()
    assert [line.split("\t")[0] for line in history] == ["version", "1", "2"], history
    assert ok(server, "view", "deps", f"{ns}.w", "-r", dev).startswith(f"{ns}.w: ok\n")
    assert f"{ns}.w" in ok(server, "view", "dependents", f"{ns}.t", "-r", dev)
    assert f"{ns}.t.name" in ok(server, "view", "lineage", f"{ns}.w", "-r", dev)
    dev_views = len(http.get(f"/api/v2/trees/{dev}/views").json()["views"])
    assert ok(server, "view", "check", "-r", dev) == f"{dev_views} views, 0 not ok\n"
    assert f" {dev} → " in ok(server, "events", "-r", dev)
    assert "recompiled: version 2" in ok(server, "view", "recompile", f"{ns}.w", "-r", dev)
    assert "version 3 adds trino" in ok(server, "view", "transpile", f"{ns}.w", "--from",
                                        "spark", "--to", "trino", "-r", dev)
    restored = ok(server, "restore", f"{ns}.v", "--from", "main", "-r", dev, "--dry-run")
    assert restored.endswith(f"would change 1 key on {dev}; nothing written\n"), restored
    reverted = ok(server, "revert", head(http, dev), "-r", dev, "--dry-run")
    assert reverted.endswith(f"would change 1 key on {dev}; nothing written\n"), reverted
    # Materialized views: made, read and dropped on dev only.
    made = ok(server, "mv", "create", f"{ns}.m", "--sql", f"SELECT id FROM {ns}.t", "-r", dev)
    assert made == f"created {ns}.m (version 1, not refreshed yet)\n"
    assert http.get(f"/api/v2/trees/main/contents/{ns}.m").status_code == 404
    assert f"[spark] SELECT id FROM {ns}.t" in ok(server, "mv", "show", f"{ns}.m", "-r", dev)
    assert "full: never refreshed" in ok(server, "mv", "plan", f"{ns}.m", "-r", dev)
    assert "version 2" in ok(server, "mv", "replace", f"{ns}.m", "--sql",
                             f"SELECT id, name FROM {ns}.t", "-r", dev)
    status = sapwood(server, "mv", "status", "-r", dev, "--key", f"{ns}.m")
    assert status.returncode == 1 and "never refreshed" in status.stdout, status.stdout
    assert ok(server, "mv", "drop", f"{ns}.m", "-r", dev) == f"dropped {ns}.m\n"


def test_each_old_spelling_still_works(server, http, ns) -> None:
    dev = _dev(http, ns)
    assert ok(server, "log", dev) == ok(server, "log", "-r", dev)
    assert ok(server, "view", "check", dev) == ok(server, "view", "check", "-r", dev)
    assert ok(server, "views", "check", dev) == ok(server, "view", "check", "-r", dev)
    assert (sapwood(server, "mv", "status", dev).stdout
            == sapwood(server, "mv", "status", "-r", dev).stdout)
    for option in ("-b", "--branch"):
        restored = ok(server, "restore", f"{ns}.v", "--from", "main", option, dev, "--dry-run")
        assert restored.endswith(f"on {dev}; nothing written\n"), restored
        reverted = ok(server, "revert", head(http, dev), option, dev, "--dry-run")
        assert reverted.endswith(f"on {dev}; nothing written\n"), reverted
    assert "recompiled: version 2" in ok(server, "view", "recompile", f"{ns}.w", "--branch",
                                         dev)
    assert "adds trino" in ok(server, "view", "transpile", f"{ns}.w", "--from", "spark",
                              "--to", "trino", "--branch", dev)
    assert "created" in ok(server, "mv", "create", f"{ns}.m", "--sql", f"SELECT id FROM {ns}.t",
                           "--branch", dev)
    assert "version 2" in ok(server, "mv", "replace", f"{ns}.m", "--sql",
                             f"SELECT id, name FROM {ns}.t", "--branch", dev)
    assert "never refreshed" in ok(server, "mv", "plan", f"{ns}.m", "--branch", dev)
    assert ok(server, "mv", "drop", f"{ns}.m", "--branch", dev) == f"dropped {ns}.m\n"
    # Two references, one by each spelling: which was meant cannot be told.
    both = sapwood(server, "log", dev, "-r", "main")
    assert both.returncode == 1 and both.stdout == ""
    assert both.stderr == (f"error: the reference is given twice ('main', '{dev}'): give it "
                           "once, with --ref\n"), both.stderr


def _params(words: str) -> list[Any]:
    c: Any = typer.main.get_command(command())
    for word in words.split():
        c = c.commands[word]
    return list(c.params)


def _verbs() -> list[str]:
    def walk(c: Any, words: list[str]) -> list[str]:
        subs = getattr(c, "commands", None)
        if subs is None:
            return [" ".join(words)]
        return [v for name, sub in subs.items() for v in walk(sub, [*words, name])]

    return walk(typer.main.get_command(command()), [])


def test_one_visible_spelling_in_every_verb() -> None:
    with_ref = []
    for words in _verbs():
        for p in _params(words):
            names = set(p.opts) | set(p.secondary_opts)
            hidden = getattr(p, "hidden", False)
            if "--ref" in names:
                assert names == {"--ref", "-r"} and not hidden, (words, names)
                with_ref.append(words)
            # The old spellings: never shown.
            if names & {"--branch", "-b"}:
                assert hidden, (words, names)
            if p.param_type_name == "argument" and (p.metavar or "") == "REF":
                assert hidden, (words, p.name)
            # A target is --into or --onto only where a merge or transplant has one.
            if names & {"--into", "--onto"}:
                assert words in ("merge", "transplant"), words
    assert sorted(with_ref) == sorted([
        "log", "show", "restore", "revert", "events", "view history", "view deps",
        "view dependents", "view lineage", "view recompile", "view transpile", "view check",
        "views check", "mv create", "mv replace", "mv drop", "mv show", "mv status", "mv plan",
        "mv refresh"])
    # mv refresh (a Spark session) keeps --branch too, hidden.
    assert any("--branch" in p.opts and p.hidden for p in _params("mv refresh"))
    log_help = run(["log", "--help"], env={"COLUMNS": "100"}, timeout=60).stdout
    assert re.search(r"^  -r, --ref REF +The reference to read", log_help, re.M), log_help
    assert "[REF]" not in log_help and "--branch" not in log_help
