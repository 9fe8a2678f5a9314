"""Nessie's ``filter`` (a CEL expression) on the commit log and on entries
(issue 43, defect 12: it was ignored and everything came back as if it
matched), over plain HTTP on SQLite and PostgreSQL, with authentication on.

It is evaluated with cel-python over the variables Nessie documents —
``commit`` (author, committer, message, commitTime, hash, properties…) and
``operations`` for the log, ``entry`` (namespace, name, key, contentType…)
for entries — or refused with a 400 naming what is not supported or wrong.
It composes with paging (pages of matches, tokens past what was looked at,
a page cut short when the request's evaluation budget is spent), with the
caller's grants (a hidden entry is never shown to a filter nor counted) and
with retention (nothing past the cutoff is looked at)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import httpx
import pytest

from catalog.access import create_key
from core.cel_filter import BUDGET
from core.commits import CommitMeta, Put
from core.content import Namespace
from store import Store
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.store.helpers import K, table

LONG = BUDGET + 100  # commits on branch ``long``: more than one request may test


def prepare(url: str) -> dict[str, str]:
    """``admin`` reads everything and manages grants; ``reader`` reads
    namespace sales of main."""
    store = Store(url)
    try:
        store.auth.create_principal("admin")
        store.auth.add_grant("admin", "read", "*")
        store.auth.add_grant("admin", "manage-grants", "*")
        store.auth.create_principal("reader")
        store.auth.add_grant("reader", "read", "main", ("sales",))
        return {n: create_key(store, n) for n in ("admin", "reader")}
    finally:
        store.close()


def layout(srv: Server) -> None:
    """main: namespaces sales, sales.eu and hr, tables in each. Branch
    ``work``: 30 commits by alice and bob (alice every third), each putting
    a table under sales or hr. Branch ``long``: LONG commits m0 … m{LONG-1}."""
    store = Store(srv.database_url)
    try:
        store.commit("main", [Put(K(n), Namespace()) for n in ("sales", "sales.eu", "hr")],
                     CommitMeta("namespaces", author="admin"))
        store.commit("main", [Put(K(k), table(f"file:///w/{k}/m.json")) for k in (
            "sales.t1", "sales.t2", "sales.eu.t3", "hr.salaries", "hr.bonus")],
            CommitMeta("tables", author="admin"))
        store.create_reference("work")
        for i in range(30):
            where = "sales" if i % 2 == 0 else "hr"
            store.commit("work", [Put(K(f"{where}.w{i}"), table(f"file:///w/w{i}/m.json"))],
                         CommitMeta(f"change {i}", author="alice" if i % 3 == 0 else "bob",
                                    properties={"n": str(i), "team": where}))
        store.create_reference("long")
        for i in range(LONG):
            store.commit("long", [Put(K(f"sales.l{i}"), Namespace())], CommitMeta(f"m{i}"))
    finally:
        store.close()


server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"}, prepare=prepare, ready=layout,
                        prefix="celfilt")


@pytest.fixture
def admin(server: Server) -> Iterator[httpx.Client]:
    with _client(server, "admin") as c:
        yield c


@pytest.fixture
def reader(server: Server) -> Iterator[httpx.Client]:
    with _client(server, "reader") as c:
        yield c


def _client(server: Server, who: str) -> httpx.Client:
    keys: dict[str, str] = server.people  # type: ignore[attr-defined]
    return http_client(base_url=server.base, timeout=60,
                       headers={"Authorization": f"Bearer {keys[who]}"})


def _pages(http: httpx.Client, path: str, items: str, **params: Any,
           ) -> tuple[list[dict[str, Any]], list[int]]:
    """Every item of a paged listing (following tokens), and each page's size."""
    out: list[dict[str, Any]] = []
    sizes: list[int] = []
    token = None
    while True:
        r = http.get(path, params={**params, **({"pageToken": token} if token else {})})
        assert r.status_code == 200, r.text
        body = r.json()
        out += body[items]
        sizes.append(len(body[items]))
        token = body["token"]
        assert body["hasMore"] is (token is not None)
        if token is None:
            return out, sizes


def _log(http: httpx.Client, ref: str, **params: Any) -> list[dict[str, Any]]:
    return _pages(http, f"/api/v2/trees/{ref}/history", "logEntries", **params)[0]


def _messages(entries: list[dict[str, Any]]) -> list[str]:
    return [e["commitMeta"]["message"] for e in entries]


def _refused(r: httpx.Response, *named: str) -> None:
    assert r.status_code == 400, r.text
    for name in named:
        assert name in r.json()["message"], r.json()["message"]


# -- the commit log ------------------------------------------------------------------------
def test_the_log_keeps_what_the_filter_accepts_page_by_page(admin: httpx.Client) -> None:
    everything = _log(admin, "work")
    alice = [e for e in everything if e["commitMeta"]["authors"] == ["alice"]]
    assert 10 <= len(alice) < len(everything)
    got, sizes = _pages(admin, "/api/v2/trees/work/history", "logEntries",
                        filter="commit.author == 'alice'", maxRecords=3)
    assert got == alice  # in log order, no gaps, no repeats
    assert max(sizes) == 3
    # Nessie's own spellings of the paging parameters page it alike.
    first = admin.get("/api/v2/trees/work/history",
                      params={"filter": "commit.author == 'alice'", "max-records": 2}).json()
    assert _messages(first["logEntries"]) == _messages(alice[:2]) and first["hasMore"]


@pytest.mark.parametrize(("cel", "expected"), [
    ("commit.committer == 'admin' || commit.author == 'bob'", lambda i: i % 3 != 0),
    ("commit.message.startsWith('change 1')", lambda i: str(i).startswith("1")),
    ("commit.message.matches('^change [0-9]$')", lambda i: i < 10),
    ("has(commit.properties.team) && commit.properties['team'] == 'hr' && "
     "int(commit.properties.n) > 20",
     lambda i: i % 2 == 1 and i > 20),
    ("'team' in commit.properties && commit.authors.exists(a, a == 'alice')",
     lambda i: i % 3 == 0),
    ("operations.exists(op, op.namespace == 'sales' && op.type == 'PUT') && "
     "has(commit.properties.n)", lambda i: i % 2 == 0),
    ("operations.exists(op, op.key == 'hr.w7' || op.name == 'w8')", lambda i: i in (7, 8)),
    ("operations.exists(op, op.content.type == 'ICEBERG_TABLE') && size(operations) == 1",
     lambda i: True),
    ("operations.all(op, op.keyElements[0] == 'hr')", lambda i: i % 2 == 1),
])
def test_the_log_filter_reads_what_nessie_documents(admin: httpx.Client, cel: str,
                                                     expected: Any) -> None:
    """Without fetch=ALL too: a filter on ``operations`` sees them (the
    answer shows them only with fetch=ALL)."""
    got = _messages(_log(admin, "work", filter=cel, maxRecords=7))
    assert got == [f"change {i}" for i in reversed(range(30)) if expected(i)]


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_filter_on_commit_time_and_hash(admin: httpx.Client) -> None:
    everything = _log(admin, "work")
    mid = everything[10]["commitMeta"]
    newer = [e for e in everything
             if _instant(e["commitMeta"]["commitTime"]) > _instant(mid["commitTime"])]
    assert 0 < len(newer) < len(everything)
    # Nessie's own example: timestamp(commit.commitTime) > timestamp('…').
    got = _log(admin, "work", filter=f"timestamp(commit.commitTime) > "
                                     f"timestamp('{mid['commitTime']}')")
    assert got == newer
    got = _log(admin, "work", filter=f"commit.commitTime > timestamp('{mid['commitTime']}') "
                                     f"&& commit.commitTime.getFullYear() >= 2024")
    assert got == newer
    got = _log(admin, "work", filter=f"commit.hash == '{mid['hash']}'", fetch="ALL")
    assert [e["commitMeta"]["hash"] for e in got] == [mid["hash"]]
    assert got[0]["operations"][0]["key"]["elements"][1] == "w19"


@pytest.mark.parametrize(("cel", "named"), [
    ("commit.author ==", ["does not parse"]),
    ("commit.nosuch == 'x'", ["commit.nosuch", "author"]),
    ("entry.namespace == 'x'", ["'entry'", "commit, operations"]),
    ("ref.name == 'main'", ["'ref'"]),
    ("commit.author.lowerAscii() == 'x'", [".lowerAscii()"]),
    ("now() > commit.commitTime", ["now()"]),
    ("operations.key == 'x'", ["of a list"]),
    ("operations.exists(a, operations.exists(b, a.key != b.key))", ["square"]),
    ("google.protobuf.Timestamp{seconds: 1} < commit.commitTime", ["message literal"]),
    ("commit.author", ["true or false", "string"]),
    ("commit.properties['absent'] == 'x'", ["no such key 'absent'", "commit "]),
    ("commit.commitTime > 5", ["no matching overload for >", "(timestamp, int)"]),
    ("timestamp('not an instant') < commit.commitTime", ["failed on commit"]),
    ("(" * 40 + "true" + ")" * 40, ["nested too deeply"]),
    ("true || " * 130 + "true", ["characters"]),
])
def test_a_filter_it_cannot_use_is_refused_naming_why(admin: httpx.Client, cel: str,
                                                     named: list[str]) -> None:
    _refused(admin.get("/api/v2/trees/work/history", params={"filter": cel}), *named)


def test_listing_references_with_a_filter_is_refused(admin: httpx.Client) -> None:
    """Nessie filters references with CEL too; that is not provided, so it
    is refused rather than answered as if every reference matched."""
    _refused(admin.get("/api/v2/trees", params={"filter": "ref.name == 'main'"}),
             "'filter'", "not supported")


def test_a_page_stops_when_its_evaluation_budget_is_spent(admin: httpx.Client) -> None:
    """A filter that matches only the oldest of LONG commits: the first page
    looks at BUDGET of them and answers none, with a token past them; the
    next finds it."""
    r = admin.get("/api/v2/trees/long/history", params={"filter": "commit.message == 'm0'"})
    assert r.status_code == 200, r.text
    first = r.json()
    assert first["logEntries"] == [] and first["hasMore"] is True
    got, sizes = _pages(admin, "/api/v2/trees/long/history", "logEntries",
                        filter="commit.message == 'm0'")
    assert _messages(got) == ["m0"] and len(sizes) >= 2
    # A filter whose answer depends on few values is evaluated once per
    # value: one request walks the whole branch.
    one = admin.get("/api/v2/trees/long/history",
                    params={"filter": "commit.author == null"}).json()
    assert len(one["logEntries"]) == LONG and one["hasMore"] is False


def test_filtered_logs_at_once_each_get_their_own_answer(admin: httpx.Client) -> None:
    """Requests in the server's threads at the same time do not share an
    evaluation's state."""
    cases = {f"commit.message == 'change {i}'": [f"change {i}"] for i in range(12)}
    cases["commit.author == 'alice'"] = [f"change {i}" for i in reversed(range(30))
                                         if i % 3 == 0]

    def run(cel: str) -> list[str]:
        return _messages(_log(admin, "work", filter=cel))

    for _ in range(3):
        with ThreadPoolExecutor(6) as pool:
            answers = dict(zip(cases, pool.map(run, cases), strict=True))
        assert answers == cases


def test_the_filter_stops_at_the_retention_cutoff(admin: httpx.Client, store: Store) -> None:
    """Commits past the branch's retention are never looked at: a filter
    that fails on the oldest commit answers from what is retained."""
    store.create_reference("ret")
    for i in range(6):
        store.commit("ret", [Put(K(f"sales.r{i}"), Namespace())], CommitMeta(f"r{i}"))
        time.sleep(0.01)
    policy = admin.put("/api/v2/retention", json={"policies": [
        {"refs": "ret", "keepCommits": 3}]})
    assert policy.status_code == 200, policy.text
    try:
        cel = "commit.message == 'r0' ? int('boom') == 1 : true"
        r = admin.get("/api/v2/trees/ret/history", params={"filter": cel})
        assert r.status_code == 200, r.text
        assert _messages(r.json()["logEntries"]) == ["r5", "r4", "r3"]
        assert r.json()["hasMore"] is False and r.json()["historyExpiredBefore"]
        _refused(admin.get("/api/v2/trees/work/history", params={
            "filter": "commit.message == 'change 0' ? int('boom') == 1 : true"}),
            "failed on commit")
    finally:
        assert admin.put("/api/v2/retention", json={"policies": []}).status_code == 200


# -- entries -------------------------------------------------------------------------------
def _names(entries: list[dict[str, Any]]) -> list[str]:
    return [".".join(e["name"]["elements"]) for e in entries]


def _entries(http: httpx.Client, **params: Any) -> list[str]:
    return _names(_pages(http, "/api/v2/trees/main/entries", "entries", **params)[0])


def test_entries_keep_what_the_filter_accepts(admin: httpx.Client) -> None:
    assert _entries(admin, filter="entry.namespace == 'sales'") == [
        "sales.eu", "sales.t1", "sales.t2"]
    assert _entries(admin, filter="entry.contentType in ['ICEBERG_TABLE', 'DELTA_LAKE_TABLE']",
                    maxRecords=2) == ["hr.bonus", "hr.salaries", "sales.eu.t3", "sales.t1",
                                      "sales.t2"]
    # Nessie's example; and the names Nessie gives an entry besides.
    assert _entries(admin, filter="entry.namespace.startsWith('sales') && "
                                  "entry.contentType == 'ICEBERG_TABLE'") == [
        "sales.eu.t3", "sales.t1", "sales.t2"]
    assert _entries(admin, filter="entry.name == 't3' || entry.key == 'hr.bonus' || "
                                  "entry.keyElements.size() == 1 && entry.encodedKey == 'hr' || "
                                  "entry.namespaceElements == ['sales', 'eu']") == [
        "hr", "hr.bonus", "sales.eu.t3"]
    got = admin.get("/api/v2/trees/main/entries", params={
        "filter": "entry.name == 't1'", "content": "true"}).json()["entries"]
    assert [e["content"]["metadataLocation"] for e in got] == ["file:///w/sales.t1/m.json"]
    _refused(admin.get("/api/v2/trees/main/entries", params={"filter": "commit.author == 'x'"}),
             "'commit'", "entry")
    _refused(admin.get("/api/v2/trees/main/entries", params={"filter": "entry.contentId == 1"}),
             "entry.contentId")


def test_hidden_entries_are_never_shown_to_a_filter_nor_counted(
        reader: httpx.Client, admin: httpx.Client) -> None:
    """``reader`` sees namespace sales only: a filter over everything finds
    only that, pages of one are never empty, and an expression that would
    fail on a hidden key (hr's) answers, since no hidden key reaches it."""
    assert _entries(reader, filter="true") == ["sales", "sales.eu", "sales.eu.t3", "sales.t1",
                                               "sales.t2"]
    got, sizes = _pages(reader, "/api/v2/trees/main/entries", "entries", filter="true",
                        maxRecords=1)
    assert sizes[:-1] == [1] * (len(sizes) - 1) and len(got) == 5
    assert _entries(reader, filter="entry.namespace == 'hr' || entry.key == 'hr'") == []
    boom = "entry.keyElements[0] == 'hr' ? int('boom') == 1 : entry.contentType != 'NAMESPACE'"
    assert _entries(reader, filter=boom) == ["sales.eu.t3", "sales.t1", "sales.t2"]
    _refused(admin.get("/api/v2/trees/main/entries", params={"filter": boom}),
             "failed on key 'hr'")
