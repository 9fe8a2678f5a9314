"""Commit properties under ``sapwood.`` are the catalog's own (issue 43,
loose end 2), on SQLite and PostgreSQL, over HTTP.

The server writes them — what a drop left invalid
(``sapwood.invalidated-views``), where a restore or a revert came from
(``sapwood.restore.*``, ``sapwood.revert.*``) — and the log, the change
feed and the UI read them back as its word. A client sending one, in any
case of letters, through the routes that take commit properties (a
commit's and a merge's ``commitMeta.properties``; the Iceberg API takes
none, only the message and author headers) is refused with a 400 naming
it, and nothing is committed. A client's own properties are kept, a
merge's too (a merge dropped them without a word).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.fixtures import BACKENDS, server_fixture

server = server_fixture(BACKENDS, prefix="server-props")

V2 = "/api/v2/trees"
FORGED = ("sapwood.invalidated-views", "sapwood.restore.commit", "sapwood.restore.source",
          "sapwood.revert.commits", "sapwood.revert.parent", "sapwood.anything",
          "Sapwood.Revert.Commits", "SAPWOOD.invalidated-views")


def head(http: httpx.Client, ref: str) -> str:
    r = http.get(f"{V2}/{quote(ref, safe='')}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def at(http: httpx.Client, ref: str) -> str:
    return quote(f"{ref}@{head(http, ref)}", safe="")


def commit(http: httpx.Client, ref: str, ns: str, properties: dict[str, str],
           ) -> httpx.Response:
    return http.post(f"{V2}/{at(http, ref)}/history/commit", json={
        "commitMeta": {"message": f"namespace {ns}", "properties": properties},
        "operations": [{"type": "PUT", "key": {"elements": [ns]},
                        "content": {"type": "NAMESPACE", "properties": {}}}]})


def merge(http: httpx.Client, source: str, properties: dict[str, str]) -> httpx.Response:
    return http.post(f"{V2}/{at(http, 'main')}/history/merge", json={
        "fromRefName": source, "commitMeta": {"message": "merge", "properties": properties}})


def props_of_head(http: httpx.Client, ref: str) -> dict[str, Any]:
    r = http.get(f"{V2}/{quote(ref, safe='')}/history", params={"maxRecords": 1})
    assert r.status_code == 200, r.text
    return r.json()["logEntries"][0]["commitMeta"]["allProperties"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def work(http: httpx.Client) -> str:
    main = head(http, "main")
    r = http.post(V2, params={"name": "work", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": main})
    assert r.status_code == 200, r.text
    r = commit(http, "work", "w1", {})
    assert r.status_code == 200, r.text
    return "work"


@pytest.mark.parametrize("name", FORGED)
def test_a_server_property_from_a_client_is_refused(http: httpx.Client, work: str,
                                                    name: str) -> None:
    before = {ref: head(http, ref) for ref in ("main", work)}
    forged = {"team": "x", name: "0" * 64}
    said = (f"commit property {name!r} in commitMeta.properties is the catalog's own: names "
            "that start with 'sapwood.' are written by the server only")
    for r in (commit(http, work, "forged", forged), merge(http, work, forged)):
        assert r.status_code == 400, r.text
        assert r.json()["errorCode"] == "BAD_REQUEST", r.text
        assert r.json()["message"] == said, r.text
    assert {ref: head(http, ref) for ref in ("main", work)} == before  # nothing landed


def test_a_clients_own_properties_are_kept_on_commits_and_merges(http: httpx.Client,
                                                                 work: str) -> None:
    r = commit(http, work, "w2", {"team": "sales", "sapwoodish": "1", "x.sapwood.y": "2"})
    assert r.status_code == 200, r.text
    assert props_of_head(http, work) == {"team": ["sales"], "sapwoodish": ["1"],
                                         "x.sapwood.y": ["2"]}
    r = merge(http, work, {"ticket": "T-1"})
    assert r.status_code == 200, r.text
    assert props_of_head(http, "main") == {"ticket": ["T-1"]}
