"""What an Idempotency-Key is bound to (issue 34, item 5), on SQLite and
PostgreSQL, with authentication on: the reference the request resolves to
and the whole request. The same key sent with the same body to another
branch is another request: it is refused (422) and does nothing, never
answered with the first branch's answer; the four Iceberg path shapes of
one request are one request; a query sent by POST (the events query) is
never answered from a key; a key another principal used is not theirs; a
key kept by a server that did not bind keys to the reference is not
replayed."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from store import Store
from store.idempotency import Answer, Once
from tests.api.auth_setup import set_up
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

KEY = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"

server = server_fixture(BACKENDS, env={"SAPWOOD_AUTH": "1"},
                        prepare=lambda url: set_up(url, protect_main=False),
                        prefix="idem-scope")


def client(server: Server, who: str) -> httpx.Client:
    return http_client(base_url=server.base, headers=server.people.headers(who), timeout=30)


@pytest.fixture(scope="module")
def etl(server: Server) -> Iterator[httpx.Client]:
    with client(server, "etl") as http:
        head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
        for name in ("etl/a", "etl/b", "etl/work"):
            r = http.post("/api/v2/trees", params={"name": name},
                          json={"type": "BRANCH", "name": "main", "hash": head})
            assert r.status_code == 200, r.text
        yield http


def new_key() -> str:
    return str(uuid.uuid4())


def namespaces(http: httpx.Client, ref: str) -> list[list[str]]:
    r = http.get(f"/iceberg/v1/{ref}/namespaces")
    assert r.status_code == 200, r.text
    found: list[list[str]] = r.json()["namespaces"]
    return found


def commits(http: httpx.Client, ref: str) -> int:
    r = http.get(f"/api/v2/trees/{ref}/history", params={"maxRecords": 1000})
    assert r.status_code == 200, r.text
    return len(r.json()["logEntries"])


def refused(r: httpx.Response, words: str) -> None:
    assert r.status_code == 422, r.text
    assert REPLAYED not in r.headers
    error = r.json()["error"]
    assert error["type"] == "UnprocessableEntityException", error
    assert words in error["message"], error


def test_the_same_key_and_body_on_another_branch_is_refused_not_replayed(
        etl: httpx.Client) -> None:
    key = new_key()
    body = {"namespace": ["landing"]}
    first = etl.post("/iceberg/v1/etl%2Fa/namespaces", json=body, headers={KEY: key})
    assert first.status_code == 200, first.text
    before = commits(etl, "etl%2Fb")
    # The probe: the same body and key on etl/b was answered 200,
    # "replayed", and etl/b never got the namespace.
    for path in ("/iceberg/v1/etl%2Fb/namespaces", "/iceberg/etl%2Fb/v1/namespaces",
                 "/iceberg/etl%2Fb/v1/etl%2Fb/namespaces"):
        refused(etl.post(path, json=body, headers={KEY: key}), "another reference")
    assert ["landing"] not in namespaces(etl, "etl%2Fb")
    assert commits(etl, "etl%2Fb") == before
    # With a key of its own, the write on etl/b happens.
    own = etl.post("/iceberg/v1/etl%2Fb/namespaces", json=body, headers={KEY: new_key()})
    assert own.status_code == 200 and REPLAYED not in own.headers, own.text
    assert ["landing"] in namespaces(etl, "etl%2Fb")


def test_every_spelling_of_the_same_request_gets_the_first_answer(etl: httpx.Client) -> None:
    key = new_key()
    body = {"namespace": ["spelled"]}
    first = etl.post("/iceberg/etl%2Fa/v1/namespaces", json=body, headers={KEY: key})
    assert first.status_code == 200, first.text
    before = commits(etl, "etl%2Fa")
    for path in ("/iceberg/v1/etl%2Fa/namespaces", "/iceberg/etl%2Fa/v1/etl%2Fa/namespaces",
                 "/iceberg/etl%2fa/v1/namespaces"):
        again = etl.post(path, json=body, headers={KEY: key})
        assert (again.status_code, again.content) == (200, first.content), (path, again.text)
        assert again.headers[REPLAYED] == "true"
    assert commits(etl, "etl%2Fa") == before


def head(http: httpx.Client, ref: str) -> str:
    r = http.get(f"/api/v2/trees/{ref}")
    assert r.status_code == 200, r.text
    return str(r.json()["reference"]["hash"])


def test_a_versioning_commit_with_the_key_of_another_branch_is_refused(
        etl: httpx.Client) -> None:
    key = new_key()
    body = {"commitMeta": {"message": "ns"}, "operations": [
        {"type": "PUT", "key": {"elements": ["v2ns"]}, "content": {"type": "NAMESPACE"}}]}
    at = head(etl, "etl%2Fa")
    first = etl.post(f"/api/v2/trees/etl%2Fa@{at}/history/commit", json=body,
                     headers={KEY: key})
    assert first.status_code == 200, first.text
    # branch@hash, however it is encoded, is the same request.
    again = etl.post(f"/api/v2/trees/etl%2Fa%40{at}/history/commit", json=body,
                     headers={KEY: key})
    assert (again.status_code, again.content) == (200, first.content), again.text
    assert again.headers[REPLAYED] == "true"
    before = commits(etl, "etl%2Fb")
    r = etl.post(f"/api/v2/trees/etl%2Fb@{head(etl, 'etl%2Fb')}/history/commit", json=body,
                 headers={KEY: key})
    assert r.status_code == 422 and REPLAYED not in r.headers, r.text
    assert r.json()["errorCode"] == "BAD_REQUEST" and "another reference" in r.json()["message"]
    assert commits(etl, "etl%2Fb") == before


def test_a_commit_header_is_part_of_the_request(etl: httpx.Client) -> None:
    key = new_key()
    body = {"namespace": ["headed"]}
    first = etl.post("/iceberg/v1/etl%2Fa/namespaces", json=body,
                     headers={KEY: key, "Sapwood-Commit-Message": "first"})
    assert first.status_code == 200, first.text
    refused(etl.post("/iceberg/v1/etl%2Fa/namespaces", json=body,
                     headers={KEY: key, "Sapwood-Commit-Message": "second"}), "commit header")


def _events(http: httpx.Client, ref: str, key: str) -> httpx.Response:
    r = http.post(f"/iceberg/v1/{ref}/events", json={"page-size": 100}, headers={KEY: key})
    assert r.status_code == 200, r.text
    return r


def test_an_events_query_is_never_answered_from_a_key(server: Server, etl: httpx.Client) -> None:
    with client(server, "admin") as admin:
        r = admin.post("/iceberg/v1/namespaces", json={"namespace": ["on_main"]})
        assert r.status_code == 200, r.text
    r = etl.post("/iceberg/v1/etl%2Fwork/namespaces", json={"namespace": ["on_work"]})
    assert r.status_code == 200, r.text
    key = new_key()
    work = _events(etl, "etl%2Fwork", key)
    main = _events(etl, "main", key)
    # The probe: main's query with etl/work's key got etl/work's events.
    assert REPLAYED not in main.headers and REPLAYED not in work.headers
    assert "on_main" in main.text and "on_work" not in main.text, main.text
    assert "on_work" in work.text, work.text
    # And it is not kept as a key: the same query again sees what is new.
    with client(server, "admin") as admin:
        assert admin.post("/iceberg/v1/namespaces",
                          json={"namespace": ["later"]}).status_code == 200
    assert "later" in _events(etl, "main", key).text


def test_contents_asked_by_post_are_never_answered_from_a_key(etl: httpx.Client) -> None:
    r = etl.post("/iceberg/v1/etl%2Fa/namespaces", json={"namespace": ["asked"]})
    assert r.status_code == 200, r.text
    key = new_key()
    found = {}
    for ref in ("etl%2Fa", "etl%2Fb"):
        r = etl.post(f"/api/v2/trees/{ref}/contents", headers={KEY: key},
                     json={"requestedKeys": [{"elements": ["asked"]}]})
        assert r.status_code == 200 and REPLAYED not in r.headers, r.text
        found[ref] = len(r.json()["contents"])
    assert found == {"etl%2Fa": 1, "etl%2Fb": 0}


def test_a_key_of_another_principal_is_not_theirs(server: Server, etl: httpx.Client) -> None:
    key = new_key()
    body = {"namespace": ["mine"]}
    assert etl.post("/iceberg/v1/etl%2Fa/namespaces", json=body,
                    headers={KEY: key}).status_code == 200
    with client(server, "admin") as admin:
        # The same key and request from admin runs as admin's own: the
        # namespace exists now (409), not etl's 200 replayed.
        r = admin.post("/iceberg/v1/etl%2Fa/namespaces", json=body, headers={KEY: key})
    assert r.status_code == 409 and REPLAYED not in r.headers, r.text


def test_a_key_kept_before_keys_named_their_reference_is_not_replayed(
        store: Store, etl: httpx.Client) -> None:
    """A row as the server before this change wrote it (a hex digest of the
    path as routed): it may be the answer of a write on another branch."""
    key = new_key()
    now_us = time.time_ns() // 1000
    old = Once("etl", key, "ab" * 32, now_us + 600_000_000)
    assert store.keys.record(old, Answer(200, "application/json",
                                         b'{"namespace":["old"],"properties":{}}'),
                             now_us) is None
    before = commits(etl, "etl%2Fb")
    r = etl.post("/iceberg/v1/etl%2Fb/namespaces", json={"namespace": ["old"]},
                 headers={KEY: key})
    refused(r, "earlier version of the server")
    assert ["old"] not in namespaces(etl, "etl%2Fb")
    assert commits(etl, "etl%2Fb") == before
