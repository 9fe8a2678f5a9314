"""What a newcomer's mistakes are told (issue 44, the trial's defects;
docs/cli.md, "Errors"): a mistyped key to ``view dependents`` is an error
with what was meant, not "no view reads it"; a bare hash that starts with a
digit is told how a commit is named, as one that starts with a letter is; a
command line that cannot be parsed is click's usage and exit 2, everything
else that fails one ``error:`` line and exit 1 (``serve``'s refusals too).
The real ``sapwood`` command against real servers (SQLite and PostgreSQL)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1
from tests.api.test_versioning_http import head
from tests.api.test_view_analysis_http import make
from tests.pg import free_port
from tests.server import Server
from tests.zygote_client import run


def sapwood(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return run([*args], env={"SAPWOOD_URI": server.base, "COLUMNS": "200"}, timeout=60)


def test_a_mistyped_key_to_dependents_is_an_error_with_what_was_meant(server, http,
                                                                      ns) -> None:
    assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table("orders")
                     ).status_code == 200
    make(http, ns, "revenue", "SELECT id FROM orders")
    out = sapwood(server, "view", "dependents", f"{ns}.ordrs")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stdout == ""
    assert out.stderr == (f"error: key '{ns}.ordrs' does not exist at 'main' "
                          f"(did you mean '{ns}.orders'?)\n"), out.stderr
    # A key the branch held once, dropped: no view reads it, as before.
    assert http.delete(f"{V1}/namespaces/{ns}/views/revenue").status_code == 204
    out = sapwood(server, "view", "dependents", f"{ns}.revenue")
    assert (out.returncode, out.stdout) == (0, f"{ns}.revenue does not exist at main; "
                                               "no view reads it\n"), out.stderr
    # The table, there: its dependents (none now), exit 0.
    assert sapwood(server, "view", "dependents", f"{ns}.orders").returncode == 0


def test_a_bare_hash_that_starts_with_a_digit_is_told_how_commits_are_named(
        server, http: httpx.Client, ns) -> None:
    bare = "8c3792ac1a11"
    hint = f"(a commit is named @{bare}, or NAME@{bare})"
    for args in (["log", "-r", bare], ["show", f"{ns}.x", "-r", bare],
                 ["restore", f"{ns}.x", "--from", bare], ["log", "-r", f"{bare}~1"]):
        out = sapwood(server, *args)
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            f"error: invalid reference name '{bare}': names start with a letter"), lines
        assert lines[0].endswith(hint), lines
    # The API says it too; a name that only starts with a digit is not a hash.
    r = http.get(f"/api/v2/trees/{bare}")
    assert r.status_code == 400 and hint in r.text, r.text
    r = http.get("/api/v2/trees/9lives")
    assert r.status_code == 400 and "a commit is named" not in r.text, r.text
    assert head(http, "main")


def test_usage_errors_exit_2_with_clicks_usage_and_refusals_exit_1(server,
                                                                   tmp_path: Path) -> None:
    out = sapwood(server, "log", "--limt", "5")
    assert out.returncode == 2 and out.stdout == "", out
    assert out.stderr.splitlines()[0] == "Usage: sapwood log [OPTIONS]", out.stderr
    assert "Error: No such option: --limt (Possible options: --limit)" in out.stderr
    # serve's refusal of an open catalog on a network address: one line, exit 1.
    out = run(["serve", "--host", "0.0.0.0", "--port", str(free_port())],
              env={"SAPWOOD_DATA_DIR": str(tmp_path), "SAPWOOD_AUTH": ""}, timeout=60)
    assert out.returncode == 1, (out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: refusing to serve an open catalog on 0.0.0.0"), lines


def test_several_close_names_read_as_a_list(server, http, ns) -> None:
    for name in ("orders1", "orders2", "orders3"):
        assert http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table(name)
                         ).status_code == 200
    out = sapwood(server, "show", f"{ns}.ordersx")
    assert out.returncode == 1, out
    named = re.fullmatch(rf"error: key '{ns}\.ordersx' does not exist at 'main' \(did you "
                         rf"mean '({ns}\.orders\d)', '({ns}\.orders\d)' or "
                         rf"'({ns}\.orders\d)'\?\)\n", out.stderr)
    assert named is not None and len(set(named.groups())) == 3, out.stderr
