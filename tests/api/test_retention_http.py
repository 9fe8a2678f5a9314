"""Retention policies over HTTP (issue 35), against one real server per
backend with authentication on: the list (``GET|PUT /api/v2/retention``:
order kept, bad lists refused with 400 and nothing changed, manage-grants on
every reference), each reference's cutoff (``/api/v2/retention/cutoffs``,
only references the caller reads), the 410 a read past retention gets in
both error shapes, the ``sapwood retention`` verbs (the real command) and
the UI's references page."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from typer.testing import CliRunner

from api.ui.format import instant
from catalog.access import create_key
from cli.main import command
from cli.output import short_instant
from core.instants import parse_instant
from store import Store
from tests.api.auth_setup import People, set_up
from tests.api.ui_forms import sign_in
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.zygote_client import run

R = "/api/v2/retention"


def _people(url: str) -> People:
    people = set_up(url, protect_main=False)
    s = Store(url)
    try:
        # Manages grants and reads only on etl/*: not "every reference".
        s.auth.create_principal("etlmgr")
        for privilege in ("read", "manage-grants"):
            s.auth.add_grant("etlmgr", privilege, "etl/*", ())
        people.keys["etlmgr"] = create_key(s, "etlmgr")
    finally:
        s.close()
    return people


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, prepare=_people,
                        prefix="retention")


@pytest.fixture
def admin(server: Server) -> Iterator[httpx.Client]:
    """The admin's client; whatever list a test sets is cleared after it
    (a policy changes what every read on the server may see)."""
    people: People = server.people  # type: ignore[attr-defined]
    with http_client(base_url=server.base, timeout=30, headers=people.headers("admin")) as c:
        yield c
        assert c.put(R, json={"policies": []}).status_code == 200


def as_(server: Server, who: str) -> dict[str, str]:
    people: People = server.people  # type: ignore[attr-defined]
    return people.headers(who)


def commit_on(http: httpx.Client, ref: str, n: int) -> None:
    """``n`` commits on ``ref`` (a namespace each)."""
    for _ in range(n):
        r = http.post(f"/iceberg/{quote(ref, safe='')}/v1/namespaces",
                      json={"namespace": [f"n{uuid.uuid4().hex[:12]}"]})
        assert r.status_code == 200, r.text


def branch(http: httpx.Client, name: str, source: str = "main") -> None:
    head = http.get(f"/api/v2/trees/{quote(source, safe='')}").json()["reference"]["hash"]
    r = http.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": source, "hash": head})
    assert r.status_code == 200, r.text


def log(http: httpx.Client, ref: str) -> list[dict[str, Any]]:
    """The first-parent chain of ``ref``, newest first (commit metadata)."""
    r = http.get(f"/api/v2/trees/{quote(ref, safe='')}/history", params={"maxRecords": 50})
    assert r.status_code == 200, r.text
    return [e["commitMeta"] for e in r.json()["logEntries"]]


def cutoffs(http: httpx.Client, **headers: str) -> dict[str, dict[str, Any]]:
    r = http.get(f"{R}/cutoffs", headers=headers or None)
    assert r.status_code == 200, r.text
    return {c["name"]: c for c in r.json()["references"]}


LIST = [{"refs": "main", "keep": "P30D", "keepCommits": 10},
        {"refs": "etl/*", "keep": "PT12H"},
        {"refs": "scratch?"},
        {"refs": "*", "keepCommits": 5}]


def test_the_list_round_trips_in_order(admin: httpx.Client) -> None:
    assert admin.get(R).json() == {"policies": []}
    put = admin.put(R, json={"policies": LIST})
    assert put.status_code == 200 and put.json() == {"policies": LIST}, put.text
    assert admin.get(R).json() == {"policies": LIST}
    # Replaced whole, in the new order; an explicit null is an absent field.
    flipped = [*reversed(LIST[1:]), {"refs": "main", "keep": None, "keepCommits": 3}]
    assert admin.put(R, json={"policies": flipped}).status_code == 200
    assert admin.get(R).json()["policies"] == [*reversed(LIST[1:]),
                                               {"refs": "main", "keepCommits": 3}]


@pytest.mark.parametrize(("policies", "named"), [
    ([{"refs": "etl/[ab", "keep": "P1D"}], "'etl/[ab': a '[' set is not closed"),
    ([{"refs": "etl *"}], "'etl *': no spaces"),
    ([{"refs": ""}], "Invalid refs glob ''"),
    ([{"refs": "main", "keep": "30d"}], "Invalid duration '30d'"),
    ([{"refs": "main", "keep": "P1M"}], "Invalid duration 'P1M'"),
    ([{"refs": "main", "keepCommits": 0}], "Invalid keepCommits 0 for 'main'"),
    ([{"refs": "main", "keepCommits": 2**40}], "Invalid keepCommits 1099511627776"),
    ([{"refs": "main", "keepCommits": "5"}], "policies.0.keepCommits"),
    ([{"refs": "main", "keepCommits": 2.5}], "policies.0.keepCommits"),
    ([{"refs": "main", "keepCommits": True}], "policies.0.keepCommits"),
    ([{"refs": "main", "keep_commits": 3}], "policies.0.keep_commits: Extra inputs"),
    ([{"refs": "main", "keepCommit": 3}], "policies.0.keepCommit: Extra inputs"),
    ([{"keep": "P1D"}], "policies.0.refs: Field required"),
    ([{"refs": "a"}, {"refs": "a", "keep": "P1D"}], "Retention policy 'a' is listed twice"),
    ([{"refs": f"p{i}"} for i in range(1001)], "Too many retention policies: at most 1000"),
    (None, "policies: Field required"),
])
def test_a_bad_list_is_refused_naming_why_and_changes_nothing(
        admin: httpx.Client, policies: list[dict[str, Any]] | None, named: str) -> None:
    assert admin.put(R, json={"policies": LIST}).status_code == 200
    r = admin.put(R, json={"policies": policies} if policies is not None else {"polices": []})
    assert r.status_code == 400, r.text
    assert r.json()["errorCode"] == "BAD_REQUEST" and named in r.json()["message"], r.text
    assert admin.get(R).json() == {"policies": LIST}


def test_an_unknown_top_level_field_is_refused(admin: httpx.Client) -> None:
    r = admin.put(R, json={"policies": [], "mode": "append"})
    assert r.status_code == 400 and "mode: Extra inputs" in r.json()["message"], r.text


def test_only_manage_grants_on_every_reference_may_see_or_change_the_list(
        server: Server, admin: httpx.Client) -> None:
    assert admin.put(R, json={"policies": LIST}).status_code == 200
    anonymous = http_client(base_url=server.base, timeout=30)
    for method, path in (("GET", R), ("PUT", R), ("GET", f"{R}/cutoffs")):
        r = anonymous.request(method, path, json={"policies": []})
        assert r.status_code == 401 and r.json()["errorCode"] == "UNAUTHORIZED", r.text
    for who in ("etlmgr", "reader"):
        for method in ("GET", "PUT"):
            r = anonymous.request(method, R, headers=as_(server, who),
                                  json={"policies": [{"refs": "etl/*", "keepCommits": 1}]})
            assert r.status_code == 403, r.text
            assert r.json()["errorCode"] == "FORBIDDEN" and \
                f"Principal '{who}' lacks the 'manage-grants' privilege on every reference" \
                in r.json()["message"], r.text
    assert admin.get(R).json() == {"policies": LIST}


def test_a_repeated_put_with_its_idempotency_key_is_answered_once(
        admin: httpx.Client) -> None:
    key = str(uuid.uuid4())
    first = admin.put(R, json={"policies": LIST[:1]}, headers={"Idempotency-Key": key})
    assert first.status_code == 200
    again = admin.put(R, json={"policies": LIST[:1]}, headers={"Idempotency-Key": key})
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    other = admin.put(R, json={"policies": []}, headers={"Idempotency-Key": key})
    assert other.status_code == 422, other.text
    assert admin.get(R).json() == {"policies": LIST[:1]}


def test_cutoffs_show_each_readable_reference(server: Server, admin: httpx.Client) -> None:
    branch(admin, "etl/cut")
    commit_on(admin, "etl/cut", 3)
    branch(admin, "plain_cut")
    r = admin.post("/api/v2/trees", params={"name": "tag_cut", "type": "TAG"},
                   json={"type": "BRANCH", "name": "main"})
    assert r.status_code == 200, r.text
    assert admin.put(R, json={"policies": [
        {"refs": "etl/*", "keepCommits": 2}, {"refs": "main", "keep": "P30D"},
        {"refs": "plain_*x"}, {"refs": "tag_*"}]}).status_code == 200
    before = datetime.now(UTC)
    seen = cutoffs(admin)
    after = datetime.now(UTC)
    # The newest two commits: the cutoff is the second newest's time.
    etl = seen["etl/cut"]
    assert etl["type"] == "BRANCH" and etl["retains"] == "since"
    assert etl["policy"] == {"refs": "etl/*", "keepCommits": 2}
    assert etl["cutoff"] == log(admin, "etl/cut")[1]["commitTime"]
    # Thirty days: now less thirty days, as the request saw it.
    main = seen["main"]
    assert main["retains"] == "since" and main["policy"] == {"refs": "main", "keep": "P30D"}
    assert before - timedelta(days=30) <= parse_instant(main["cutoff"]) <= \
        after - timedelta(days=30)
    # No policy matches: all of it. A tag retains its own commit, whatever the globs.
    assert seen["plain_cut"] == {"name": "plain_cut", "type": "BRANCH", "policy": None,
                                 "retains": "all", "cutoff": None}
    assert seen["tag_cut"] == {"name": "tag_cut", "type": "TAG", "policy": None,
                               "retains": "head", "cutoff": None}
    # A policy with neither field keeps only the head.
    assert admin.put(R, json={"policies": [{"refs": "plain_*"}]}).status_code == 200
    assert cutoffs(admin)["plain_cut"]["retains"] == "head"
    # Only the references the caller reads: etlmgr reads etl/*, nobody reads none.
    assert set(cutoffs(admin, **as_(server, "etlmgr"))) == {
        name for name in cutoffs(admin) if name.startswith("etl/")}
    assert cutoffs(admin, **as_(server, "nobody")) == {}
    # Paged as the references are: a prefix, and a page at a time.
    page = admin.get(f"{R}/cutoffs", params={"prefix": "plain_", "maxRecords": 1}).json()
    assert [c["name"] for c in page["references"]] == ["plain_cut"]
    first = admin.get(f"{R}/cutoffs", params={"maxRecords": 1}).json()
    assert first["hasMore"] and len(first["references"]) == 1
    rest = admin.get(f"{R}/cutoffs", params={"pageToken": first["token"]}).json()
    assert [c["name"] for c in [*first["references"], *rest["references"]]] == \
        sorted(cutoffs(admin))


def test_a_read_past_retention_is_gone_in_both_error_shapes(server: Server,
                                                            admin: httpx.Client) -> None:
    commit_on(admin, "main", 6)
    chain = log(admin, "main")
    old = chain[5]  # main~5: made by this test, on no other reference's chain
    entries = admin.get("/api/v2/trees/main~5/entries")
    assert entries.status_code == 200, entries.text
    ns = quote(entries.json()["entries"][0]["name"]["elements"][0], safe="")
    at = f"/iceberg/main*{old['commitTime']}/v1/namespaces/{ns}"
    assert admin.get(at).status_code == 200
    assert admin.put(R, json={"policies": [{"refs": "main", "keepCommits": 2}]}
                     ).status_code == 200
    cutoff = cutoffs(admin)["main"]["cutoff"]
    assert cutoff == chain[1]["commitTime"]
    # Nessie's shape.
    r = admin.get("/api/v2/trees/main~5/entries")
    assert r.status_code == 410, r.text
    body = r.json()
    assert body["errorCode"] == "HISTORY_EXPIRED" and body["status"] == 410
    message = body["message"]
    assert f"Commit {old['hash'][:12]}" in message and "retention of 'main'" in message
    assert "policy 'main' (keep the newest 2 commits)" in message, message
    assert f"its history before {cutoff} has expired" in message, message
    # Iceberg's, at an instant before the cutoff.
    r = admin.get(at)
    assert r.status_code == 410, r.text
    err = r.json()["error"]
    assert err["code"] == 410 and err["type"] == "HistoryExpiredException"
    assert "retention of 'main'" in err["message"] and cutoff in err["message"], err
    # Within the policy: read as before; without it, the old commit reads again
    # (nothing was collected: the policy alone refused it).
    assert admin.get("/api/v2/trees/main~1/entries").status_code == 200
    assert admin.put(R, json={"policies": []}).status_code == 200
    assert admin.get("/api/v2/trees/main~5/entries").status_code == 200


def sapwood(server: Server, *args: str, ok: bool = True, here: bool = False) -> str:
    """The command as the admin, forked from the zygote; ``here``: in this
    process (what a verb prints does not depend on being its own process)."""
    people: People = server.people  # type: ignore[attr-defined]
    env = {"SAPWOOD_URI": server.base, "SAPWOOD_CREDENTIAL": people.keys["admin"]}
    if here:
        done = CliRunner().invoke(command(), list(args), env=env)
        assert done.exit_code == 0, (args, done.output, done.exception)
        return done.stdout
    proc = run([*args], timeout=60, env=env)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("error: "), proc.stderr
    return line


def test_the_retention_verbs(server: Server, admin: httpx.Client) -> None:
    assert "policy 'main' (keep P30D, 10 commits) added; 1 policy" in sapwood(
        server, "retention", "set", "main", "--keep", "P30D", "--keep-commits", "10")
    assert "policy 'etl/*' (keep PT12H) added; 2 policies" in sapwood(
        server, "retention", "set", "etl/*", "--keep", "PT12H", here=True)
    # Replaced where it stands: main stays first.
    assert "policy 'main' (3 commits) replaced; 2 policies" in sapwood(
        server, "retention", "set", "main", "--keep-commits", "3", here=True)
    assert admin.get(R).json()["policies"] == [{"refs": "main", "keepCommits": 3},
                                               {"refs": "etl/*", "keep": "PT12H"}]
    # Piped: the policies, then every reference with what it keeps.
    shown = sapwood(server, "retention", "show").splitlines()
    assert shown[1:4] == ["refs\tkeep\tkeep commits", "main\t\t3", "etl/*\tPT12H\t"], shown
    main = cutoffs(admin)["main"]
    kept = (f"since {short_instant(main['cutoff'])}" if main["retains"] == "since"
            else "all history")
    assert f"main\tbranch\tmain\t3 commits\t{kept}" in shown, shown
    doc = json.loads(sapwood(server, "retention", "show", "--json", here=True))
    assert doc["policies"] == admin.get(R).json()["policies"]
    # (A cutoff of PT12H moves with the clock: the rest is the API's answer.)
    assert {r["name"]: {**r, "cutoff": None} for r in doc["references"]} == \
        {name: {**r, "cutoff": None} for name, r in cutoffs(admin).items()}
    assert next(r for r in doc["references"] if r["name"] == "main")["policy"] == \
        {"refs": "main", "keepCommits": 3}
    # Refused: the API's message, one line, nothing changed.
    assert "Invalid duration '30d'" in sapwood(server, "retention", "set", "x", "--keep", "30d",
                                               ok=False)
    assert "no retention policy has the glob 'nope'" in sapwood(
        server, "retention", "remove", "nope", ok=False)
    assert "policy 'etl/*' removed; 1 policy" in sapwood(server, "retention", "remove", "etl/*",
                                                         here=True)
    assert json.loads(sapwood(server, "retention", "remove", "main", "--json", here=True)) == {
        "policies": []}


def test_the_references_page_shows_policy_and_cutoff(server: Server,
                                                     admin: httpx.Client) -> None:
    branch(admin, "etl/ui")
    commit_on(admin, "etl/ui", 3)
    branch(admin, "plain_ui")
    admin.post("/api/v2/trees", params={"name": "tag_ui", "type": "TAG"},
               json={"type": "BRANCH", "name": "main"})
    assert admin.put(R, json={"policies": [{"refs": "etl/*", "keep": "PT0S", "keepCommits": 2},
                                           {"refs": "scratch*"}]}).status_code == 200
    people: People = server.people  # type: ignore[attr-defined]
    page = sign_in(server, people.keys["admin"]).get("/ui", params={"prefix": ""}).text

    def row(name: str) -> tuple[str, str]:
        m = re.search(rf'<a href="/ui/tree/[^"]*">{re.escape(name)}</a></td>.*?'
                      r'<td class="retention">(.*?)</td>\s*<td class="since">(.*?)</td>',
                      page, re.S)
        assert m is not None, (name, page)
        return m.group(1), m.group(2)

    # The cutoff as the UI shows every instant (api.ui.format.instant).
    cutoff = str(instant(log(admin, "etl/ui")[1]["commitTime"]))
    assert row("etl/ui") == ("keep PT0S, 2 commits (policy &#39;etl/*&#39;)", cutoff)
    assert row("plain_ui") == ("all history", "—")
    assert row("tag_ui") == ("its commit (a tag)", "—")
    # A reader sees the same for what it reads (the cutoffs are a read).
    reader = sign_in(server, people.keys["reader"]).get("/ui").text
    assert cutoff in reader and "policy &#39;etl/*&#39;" in reader
