"""Errors a person can act on (docs/cli.md, "Errors"): one wording for
what does not exist, in every verb, with what was probably meant (from
listings the caller may read: a name it may not see is never suggested); a
table asked for as a view says so; a bad hash answers the same in every
verb; a catalog that cannot be reached says how to start one or where to
point; a 401 names SAPWOOD_CREDENTIAL; ``sapwood serve`` on a busy port
stops at one line. The real ``sapwood`` command against real servers."""

from __future__ import annotations

import re
import socket
import subprocess

import httpx

from tests.api import spark_bodies as sb
from tests.api.auth_setup import People, with_principals
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.test_view_analysis_http import make
from tests.fixtures import server_fixture
from tests.http import http_client
from tests.pg import free_port
from tests.server import Server
from tests.zygote_client import run

# The CLI speaks HTTP only: SQLite-backed servers are enough here (the
# HTTP tests cover both backends).
server = server_fixture(prefix="cli-err")
GRANTS = {
    "admin": [(p, "*", ()) for p in ("read", "write", "create-reference")],
    # Reads main's namespace 'open' only.
    "peer": [("read", "main", ("open",))],
}
secured = server_fixture(prefix="cli-err-auth", env={"SAPWOOD_AUTH": "1"},
                         prepare=lambda url: with_principals(url, GRANTS))


def sapwood(server: Server, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200", **env}, timeout=60)


def error(server: Server, *args: str, **env: str) -> str:
    """The one line a failing verb prints (and nothing on standard output)."""
    out = sapwood(server, *args, **env)
    assert out.returncode == 1 and out.stdout == "", (args, out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, out.stderr)
    return lines[0].removeprefix("error: ")


def _shop(http: httpx.Client, ns: str) -> str:
    assert http.post(f"{V1}/namespaces/{ns}/tables",
                     json=sb.create_table("orders")).status_code == 200
    make(http, ns, "revenue", "SELECT id, name FROM orders")
    dev = f"develop_{ns[-6:]}"
    r = http.post(f"/api/v2/trees?name={dev}",
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    return dev


def test_a_mistyped_reference_or_key_says_what_was_meant(server, http, ns) -> None:
    dev = _shop(http, ns)
    typo = dev.replace("develop", "devlop")
    meant = f"reference '{typo}' does not exist (did you mean '{dev}'?)"
    for args in (("log", "-r", typo), ("show", f"{ns}.revenue", "-r", typo),
                 ("view", "check", "-r", typo), ("diff", "main", typo),
                 ("merge", typo, "--into", "main"), ("merge", "main", "--into", typo),
                 ("branch", "create", f"x_{ns[-6:]}", "--from", typo),
                 ("view", "deps", f"{ns}.revenue", "-r", typo)):
        assert error(server, *args) == meant, args
    # Keys: one wording, the kind the verb reads, and the closest names.
    assert error(server, "show", f"{ns}.revnue") == (
        f"key '{ns}.revnue' does not exist at 'main' (did you mean '{ns}.revenue'?)")
    for verb in ("deps", "lineage", "history"):
        assert error(server, "view", verb, f"{ns}.revnue", "-r", dev) == (
            f"view '{ns}.revnue' does not exist at '{dev}' (did you mean '{ns}.revenue'?)")
    assert error(server, "mv", "show", f"{ns}.revnue") == (
        f"materialized view '{ns}.revnue' does not exist at 'main'")
    assert error(server, "view", "deps", f"nope_{ns[-6:]}.x") == (
        f"view 'nope_{ns[-6:]}.x' does not exist at 'main'")
    # A table asked for as a view, a view as a materialized view: said so.
    for verb in ("deps", "lineage", "history", "recompile"):
        assert error(server, "view", verb, f"{ns}.orders") == (
            f"{ns}.orders at 'main' is a table, not a view"), verb
    assert error(server, "mv", "show", f"{ns}.revenue") == (
        f"{ns}.revenue at 'main' is a view, not a materialized view")
    # A bare hash is not a reference: the grammar's way to name a commit.
    h = head(http, "main")[:10]
    assert error(server, "log", "-r", "a" + h[1:]) == (
        f"reference 'a{h[1:]}' does not exist (a commit is named @a{h[1:]}, or "
        f"NAME@a{h[1:]})")


def test_a_bad_hash_answers_the_same_in_every_verb(server, http, ns) -> None:
    _shop(http, ns)
    for bad, said in (("zz", "invalid commit hash 'zz'{where}: only hex digits allowed"),
                      ("12ab", "invalid commit hash '12ab'{where}: expected 8 to 64 hex "
                               "characters, got 4"),
                      ("00deadbeef", "no commit hash starts with 00deadbeef")):
        spec = f"main@{bad}"
        where = "" if said.startswith("no commit") else f" in '{spec}'"
        for args in (("log", "-r", spec), ("show", f"{ns}.revenue", "-r", spec),
                     ("view", "history", f"{ns}.revenue", "-r", spec), ("diff", spec, "main"),
                     ("restore", f"{ns}.revenue", "--from", spec),
                     ("branch", "create", f"b_{ns[-6:]}", "--from", spec),
                     ("branch", "assign", "main", spec), ("view", "check", "-r", spec)):
            assert error(server, *args) == said.format(where=where), args
        for args in (("revert", bad), ("transplant", bad, "--onto", "main")):
            assert error(server, *args) == said.format(where=""), args


def test_a_catalog_that_is_not_there(tmp_path) -> None:
    uri = f"http://127.0.0.1:{free_port()}"
    for args in (["branch", "list"], ["log"], ["view", "check"]):
        out = run([*args, "--uri", uri], timeout=60)
        assert out.returncode == 1 and out.stdout == "", out.stdout
        assert out.stderr == (
            f"error: cannot reach the catalog at {uri} (connection refused): start one with "
            "`sapwood serve`, or set SAPWOOD_URI (or --uri) to the catalog's URL\n"), out.stderr


def test_a_credential_is_asked_for_by_its_variable(secured: Server) -> None:
    people: People = secured.people  # type: ignore[attr-defined]
    assert error(secured, "branch", "list") == (
        f"authentication required by the catalog at {secured.base}: set SAPWOOD_CREDENTIAL "
        "to an API key (ID:SECRET, from `sapwood key create`) or an access token")
    key_id = people.keys["peer"].partition(":")[0]
    assert error(secured, "branch", "list", SAPWOOD_CREDENTIAL=f"{key_id}:wrong") == (
        f"the catalog at {secured.base} refused the credential in SAPWOOD_CREDENTIAL: "
        "Invalid API key")
    listed = sapwood(secured, "branch", "list", SAPWOOD_CREDENTIAL=people.keys["peer"])
    assert listed.returncode == 0 and "main" in listed.stdout, listed.stderr


def test_a_name_the_caller_may_not_read_is_never_suggested(secured: Server) -> None:
    people: People = secured.people  # type: ignore[attr-defined]
    with http_client(base_url=secured.base, headers=people.headers("admin")) as admin:
        for name in ("open", "closed"):
            assert admin.post(f"{V1}/namespaces", json={"namespace": [name]}).status_code == 200
            assert admin.post(f"{V1}/namespaces/{name}/tables",
                              json=sb.create_table("revenue")).status_code == 200
        r = admin.post("/api/v2/trees?name=secret_plan", json={
            "type": "BRANCH", "name": "main", "hash": head(admin, "main")})
        assert r.status_code == 200, r.text
    as_admin = {"SAPWOOD_CREDENTIAL": people.keys["admin"]}
    as_peer = {"SAPWOOD_CREDENTIAL": people.keys["peer"]}
    assert error(secured, "log", "-r", "secret_plam", **as_admin) == (
        "reference 'secret_plam' does not exist (did you mean 'secret_plan'?)")
    assert error(secured, "log", "-r", "secret_plam", **as_peer) == (
        "reference 'secret_plam' does not exist")
    assert error(secured, "log", "-r", "mian", **as_peer) == (
        "reference 'mian' does not exist (did you mean 'main'?)")
    assert error(secured, "show", "closed.revenu", **as_admin).endswith(
        "(did you mean 'closed.revenue'?)")
    assert error(secured, "show", "open.revenu", **as_peer) == (
        "key 'open.revenu' does not exist at 'main' (did you mean 'open.revenue'?)")
    # A key it may not read answers as one that is not there, whatever the
    # verb and whether or not it exists (its kind and its neighbours unsaid).
    assert error(secured, "view", "deps", "closed.revenue", **as_admin) == (
        "closed.revenue at 'main' is a table, not a view")
    for args in (("show",), ("view", "deps"), ("view", "history")):
        said = {key: error(secured, *args, key, **as_peer).replace(key, "KEY")
                for key in ("closed.revenue", "closed.revenu", "closed.nothing")}
        assert len(set(said.values())) == 1, said
        shown = " ".join(said.values())
        assert "revenue" not in shown and "table" not in shown, said


def test_serve_on_a_busy_port_stops_at_one_line(tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run(["serve", "--port", str(port)], timeout=60,
                  env={"SAPWOOD_DATA_DIR": str(tmp_path / "data")})
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert out.stderr == (
        f"error: cannot listen on 127.0.0.1:{port} (address already in use): another process "
        "(a sapwood serve?) has it; choose another port with --port\n"), out.stderr
    assert not (tmp_path / "data").exists()  # nothing was created either
    assert not re.search(r"https?://", out.stderr)
