"""Reverting commits asks the caller's grants before anything else (issue
34, item 2), on SQLite and PostgreSQL, over HTTP, in the web UI and from
the CLI.

``nsw`` reads and writes namespace ``sales`` of ``etl/work``, where ``admin``
committed changes to ``hr`` with messages that are nobody else's business.
A revert of a commit that changed anything ``nsw`` may not read is refused
with one answer that names none of it, whether the key changed again since
(the conflict check used to run first and name it), whatever the modes
say (``DROP`` used to take the hidden key out before the check, and the
dry run then quoted the commit's message), and for a dry run too. A commit
it may not read at all (only on ``secret``) answers as one that does not
exist.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from api.ui.client import COOKIE
from tests.api.auth_setup import People
from tests.api.hidden_setup import build, set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run as sapwood

ETL = "/iceberg/v1/etl%2Fwork"
UNKNOWN = "f" * 64
REFUSED = ("Principal 'nsw' lacks the 'read' privilege on some of the keys these commits "
           "changed on reference 'etl/work'")


def props(value: str) -> dict[str, Any]:
    return {"requirements": [], "updates": [{"action": "set-properties",
                                             "updates": {"k": value}}]}


def changes(server: Server) -> dict[str, str]:
    """Commits on etl/work (and one on secret), by what they changed."""
    people: People = server.people  # type: ignore[attr-defined]
    admin = http_client(base_url=server.base, headers=people.headers("admin"), timeout=30)
    made: dict[str, str] = {}

    def commit(name: str, path: str, body: dict[str, Any], message: str,
               branch: str = "etl%2Fwork") -> None:
        r = admin.post(path, json=body, headers={"Sapwood-Commit-Message": message})
        assert r.status_code in (200, 204), r.text
        made[name] = admin.get(f"/api/v2/trees/{branch}").json()["reference"]["hash"]

    commit("hr", f"{ETL}/namespaces/hr/tables/salaries", props("1"),
           "SECRET-MSG hr change on etl/work")
    commit("hr_again", f"{ETL}/namespaces/hr/tables/salaries", props("2"), "SECRET-MSG again")
    commit("hr_ns", f"{ETL}/namespaces/hr/properties", {"updates": {"k": "v"}, "removals": []},
           "SECRET-MSG hr namespace")
    commit("both", f"{ETL}/transactions/commit", {"table-changes": [
        {"identifier": {"namespace": ["sales"], "name": "orders"}, **props("3")},
        {"identifier": {"namespace": ["hr"], "name": "salaries"}, **props("3")}]},
        "SECRET-MSG both")
    commit("sales", f"{ETL}/namespaces/sales/tables/orders", props("4"), "sales change")
    commit("secret", "/iceberg/v1/secret/namespaces/sales/properties",
           {"updates": {"k": "v"}, "removals": []}, "SECRET-MSG on secret", branch="secret")
    return made


def ready(server: Server) -> None:
    build(server)
    server.commits = changes(server)  # type: ignore[attr-defined]


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, prepare=set_up, ready=ready,
                        prefix="revert-grants")


def client(server: Server, who: str) -> httpx.Client:
    people: People = server.people  # type: ignore[attr-defined]
    return http_client(base_url=server.base, headers=people.headers(who),
                       cookies={COOKIE: people.keys[who]}, timeout=30)


def revert(http: httpx.Client, commits: list[str], **options: Any) -> httpx.Response:
    head = http.get("/api/v2/trees/etl%2Fwork")
    assert head.status_code == 200, head.text
    ref = quote(f"etl/work@{head.json()['reference']['hash']}", safe="")
    return http.post(f"/api/v2/trees/{ref}/history/revert",
                     json={"commits": commits, **options})


def assert_names_nothing_hidden(text: str) -> None:
    for word in ("SECRET", "salaries", "namespace hr", "hr.", "'hr'"):
        assert word not in text, text


def test_a_revert_touching_hidden_keys_is_refused_naming_none(server: Server) -> None:
    commits: dict[str, str] = server.commits  # type: ignore[attr-defined]
    nsw = client(server, "nsw")
    # The scenario holds: for admin, 'hr' changed again since, a conflict named.
    r = revert(client(server, "admin"), [commits["hr"]], dryRun=True)
    assert r.status_code == 409 and "hr.salaries" in r.json()["message"], r.text
    answers = []
    for name in ("hr", "hr_ns", "both"):
        for options in ({}, {"dryRun": True}, {"defaultKeyMergeMode": "DROP", "dryRun": True},
                        {"dryRun": True, "keyMergeModes": [
                            {"key": {"elements": ["hr", "salaries"]}, "mergeBehavior": "DROP"},
                            {"key": {"elements": ["hr"]}, "mergeBehavior": "DROP"}]},
                        {"defaultKeyMergeMode": "FORCE"}):
            r = revert(nsw, [commits[name]], **options)
            assert r.status_code == 403, (name, options, r.text)
            assert r.json()["errorCode"] == "FORBIDDEN", r.text
            assert_names_nothing_hidden(r.text)
            answers.append(r.json())
    # One answer, whichever commit and however asked.
    assert all(a == answers[0] for a in answers), answers
    assert answers[0]["message"] == REFUSED
    # Together with a commit it may revert: still refused, as one.
    r = revert(nsw, [commits["sales"], commits["hr_ns"]], dryRun=True)
    assert r.status_code == 403 and r.json() == answers[0], r.text
    # Nothing was written.
    log = client(server, "admin").get("/api/v2/trees/etl%2Fwork/history").json()
    assert log["logEntries"][0]["commitMeta"]["hash"] == commits["sales"]


def test_a_commit_it_may_not_read_is_unknown_to_it(server: Server) -> None:
    commits: dict[str, str] = server.commits  # type: ignore[attr-defined]
    nsw = client(server, "nsw")
    secret = commits["secret"]
    for hidden, missing in ((secret, UNKNOWN), (secret[:8], UNKNOWN[:8])):
        a, b = revert(nsw, [hidden], dryRun=True), revert(nsw, [missing], dryRun=True)
        assert a.status_code == b.status_code == 404, (a.text, b.text)
        assert a.text.replace(hidden, missing) == b.text
        assert b.json()["errorCode"] == "CONTENT_NOT_FOUND", b.text


def test_what_it_may_read_it_reverts_and_is_told(server: Server) -> None:
    commits: dict[str, str] = server.commits  # type: ignore[attr-defined]
    sales = commits["sales"]
    # 'peer' reads sales.orders but may not write it: the refusal may name it.
    r = revert(client(server, "peer"), [sales], dryRun=True)
    assert r.status_code == 403, r.text
    assert r.json()["message"] == ("Principal 'peer' lacks the 'write' privilege on reference "
                                   "'etl/work' in namespace sales.orders"), r.text
    nsw = client(server, "nsw")
    dry = revert(nsw, [sales], dryRun=True)
    assert dry.status_code == 200, dry.text
    # It may not read all of etl/work: the reverted commit's message is not
    # quoted to it (tests/api/test_commit_meta_grants.py).
    assert dry.json()["message"] == f"revert {sales[:12]}"
    assert [k["key"]["elements"] for k in dry.json()["keys"]] == [["sales", "orders"]]
    done = revert(nsw, [sales])
    assert done.status_code == 200 and done.json()["hash"], done.text


def test_the_ui_and_the_cli_say_the_same(server: Server) -> None:
    commits: dict[str, str] = server.commits  # type: ignore[attr-defined]
    people: People = server.people  # type: ignore[attr-defined]
    nsw = client(server, "nsw")
    for name in ("hr", "both"):
        page = nsw.get("/ui/revert", params={"commit": commits[name], "branch": "etl/work"})
        assert page.status_code == 403, page.text[:500]
        assert REFUSED.replace("'", "&#39;") in page.text
        assert "SECRET" not in page.text and "salaries" not in page.text
        proc = sapwood(["revert", commits[name], "--branch", "etl/work", "--dry-run"],
                       timeout=60, env={"SAPWOOD_URI": server.base,
                                        "SAPWOOD_CREDENTIAL": people.keys["nsw"]})
        assert proc.returncode != 0, proc.stdout
        assert REFUSED in proc.stderr, proc.stderr
        assert_names_nothing_hidden(proc.stdout + proc.stderr)


def test_a_restore_needs_read_on_its_whole_source(server: Server) -> None:
    nsw = client(server, "nsw")
    head = nsw.get("/api/v2/trees/etl%2Fwork").json()["reference"]["hash"]
    ref = quote(f"etl/work@{head}", safe="")
    keys = [{"elements": ["sales", "orders"]}]
    r = nsw.post(f"/api/v2/trees/{ref}/history/restore",
                 json={"source": "etl/work~1", "keys": keys, "dryRun": True})
    assert r.status_code == 403, r.text
    assert r.json()["message"] == ("Principal 'nsw' lacks the 'read' privilege on reference "
                                   "'etl/work~1'"), r.text
    # A source it may not read at all is one that does not exist.
    a, b = (nsw.post(f"/api/v2/trees/{ref}/history/restore",
                     json={"source": source, "keys": keys, "dryRun": True})
            for source in ("secret", "nosuchbr"))
    assert a.status_code == b.status_code == 404, (a.text, b.text)
    assert a.text.replace("secret", "nosuchbr") == b.text
