"""Nothing a client sends to a route that changes something is ignored
(issue 43, defect 12), over plain HTTP on SQLite and PostgreSQL.

``POST /api/v2/admin/gc`` takes its options from the query string or a JSON
body (``{"dryRun": true}`` is a dry run); a body it cannot use, or one that
contradicts the query, is a 400 naming the problem and nothing runs. Every
mutating route of both APIs refuses a query parameter it does not take, a
scalar one given twice, and a body when it reads none (api.unused) — each
refusal names what was refused, and nothing is done."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from core.commits import CommitMeta, Put
from core.content import Namespace
from store import Store
from tests.store.helpers import K

GC = "/api/v2/admin/gc"
# Routes that read their body themselves: the OAuth form, the spec's
# metrics report (accepted, not kept) and gc's JSON options.
READS_OWN_BODY = {"/iceberg/v1/oauth/tokens",
                  "/iceberg/v1/namespaces/{namespace}/tables/{table}/metrics", GC,
                  "/api/v2/admin/import"}


def _collectible(store: Store, name: str) -> None:
    """A commit only a deleted branch held: gc with grace 0 removes it."""
    store.create_reference(name, source="main")
    store.commit(name, [Put(K(f"{name}_ns"), Namespace())], CommitMeta("scratch"))
    store.delete_reference(name, store.get_reference(name).hash)


def _removable(http: httpx.Client) -> int:
    dry = http.post(GC, params={"dryRun": "true", "graceSeconds": 0})
    assert dry.status_code == 200, dry.text
    assert dry.json()["store"]["dry_run"] is True
    return int(dry.json()["store"]["removed_commits"])


def _message(r: httpx.Response) -> str:
    """An error's message: Nessie's body under /api/, Iceberg's under /iceberg/."""
    body = r.json()
    return str(body["error"]["message"] if "error" in body else body["message"])


def _refused(r: httpx.Response, *named: str) -> None:
    assert r.status_code == 400, r.text
    message = _message(r)
    for name in named:
        assert name in message, message


def test_a_json_body_says_dry_run(store: Store, http: httpx.Client) -> None:
    _collectible(store, "gc_body")
    before = _removable(http)
    assert before >= 1
    r = http.post(GC, json={"dryRun": True, "graceSeconds": 0})
    assert r.status_code == 200, r.text
    assert r.json()["store"]["dry_run"] is True
    assert r.json()["store"]["removed_commits"] == before
    # The same parameter both ways: fine when they agree.
    r = http.post(GC, params={"dryRun": "true"}, json={"dryRun": True, "graceSeconds": 0})
    assert r.status_code == 200 and r.json()["store"]["dry_run"] is True, r.text
    assert _removable(http) == before  # nothing was collected


@pytest.mark.parametrize(("params", "content", "headers", "named"), [
    # Query and body disagree.
    ({"dryRun": "false", "graceSeconds": 0}, b'{"dryRun": true}', {}, ["dryRun"]),
    ({"graceSeconds": 0}, b'{"graceSeconds": 5}', {}, ["graceSeconds"]),
    # Not an object, not JSON, not a JSON body at all.
    ({"graceSeconds": 0}, b"[]", {}, ["object"]),
    ({"graceSeconds": 0}, b"null", {}, ["object"]),
    ({"graceSeconds": 0}, b"true", {}, ["object"]),
    ({"graceSeconds": 0}, b"dryRun=true", {}, ["JSON"]),
    ({"graceSeconds": 0}, b"dryRun=true",
     {"Content-Type": "application/x-www-form-urlencoded"}, ["application/x-www-form-urlencoded"]),
    # Unknown fields, wrong JSON types, nulls, out of range.
    ({"graceSeconds": 0}, b'{"dry_run": true}', {}, ["dry_run"]),
    ({"graceSeconds": 0}, b'{"dryRun": true, "grace": 0}', {}, ["grace"]),
    ({"graceSeconds": 0}, b'{"dryRun": "true"}', {}, ["dryRun", "boolean"]),
    ({"graceSeconds": 0}, b'{"dryRun": 1}', {}, ["dryRun", "boolean"]),
    ({}, b'{"graceSeconds": "0"}', {}, ["graceSeconds", "number"]),
    ({}, b'{"graceSeconds": -1}', {}, ["graceSeconds"]),
    ({}, b'{"graceSeconds": NaN}', {}, ["graceSeconds"]),
    ({}, b'{"writeWindowSeconds": 1}', {}, ["writeWindowSeconds"]),
    ({"graceSeconds": 0}, b'{"dryRun": null}', {}, ["dryRun", "null"]),
    # Query parameters it does not take, or one given twice.
    ({"dry_run": "true", "graceSeconds": 0}, b"", {}, ["dry_run"]),
    ([("dryRun", "true"), ("dryRun", "false"), ("graceSeconds", "0")], b"", {}, ["dryRun"]),
])
def test_gc_refuses_what_it_cannot_use(store: Store, http: httpx.Client, params: Any,
                                       content: bytes, headers: dict[str, str],
                                       named: list[str]) -> None:
    """Each would have run a real collection with grace 0 (or with options
    other than the caller's): a 400 naming the problem, and nothing ran."""
    name = "gc_" + re.sub(r"\W", "_", json.dumps([params, content.decode(), named]))[:40]
    _collectible(store, name)
    before = _removable(http)
    assert before >= 1
    _refused(http.post(GC, params=params, content=content, headers=headers), *named)
    assert _removable(http) == before


def _openapi_mutations(http: httpx.Client) -> list[tuple[str, str, bool]]:
    """(method, path template, whether it declares a body) of every mutating
    route the server describes."""
    spec = http.get("/openapi.json").json()
    return [(method.upper(), path, "requestBody" in op)
            for path, ops in spec["paths"].items() for method, op in ops.items()
            if method in ("post", "put", "delete", "patch")]


def _filled(path: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda m: "main" if "ref" in m.group(0) else "x", path)


def test_every_mutating_route_refuses_an_unknown_query_parameter(http: httpx.Client) -> None:
    routes = _openapi_mutations(http)
    assert len(routes) > 30
    for method, path, _ in routes:
        r = http.request(method, _filled(path), params={"sapwoodTypo": "1"})
        assert r.status_code == 400 and "sapwoodTypo" in _message(r), \
            (method, path, r.status_code, r.text)


def test_every_route_without_a_body_refuses_one(http: httpx.Client) -> None:
    bodiless = [(m, p) for m, p, body in _openapi_mutations(http)
                if not body and p not in READS_OWN_BODY]
    assert len(bodiless) > 10
    for method, path in bodiless:
        r = http.request(method, _filled(path), json={"type": "TAG"})
        assert r.status_code == 400 and "takes no request body" in _message(r), \
            (method, path, r.status_code, r.text)


def test_refusals_change_nothing(store: Store, http: httpx.Client, ns: str) -> None:
    """What each request would have done on the code before, it does not do."""
    store.create_reference("keep_me", source="main")
    head = store.get_reference("keep_me").hash
    # A delete with a typo'd parameter, or with a body it never reads.
    _refused(http.delete(f"/api/v2/trees/keep_me@{head}", params={"typ": "TAG"}), "typ")
    _refused(http.request("DELETE", f"/api/v2/trees/keep_me@{head}", json={"type": "TAG"}),
             "takes no request body")
    assert store.get_reference("keep_me").hash == head
    # A create with an unknown parameter creates nothing.
    _refused(http.post("/api/v2/trees", params={"name": "never", "type": "BRANCH", "from": "x"},
                       json={"type": "BRANCH", "name": "main"}), "from")
    assert http.get("/api/v2/trees/never").status_code == 404
    # Iceberg: a table drop with a misspelt purge flag drops nothing.
    created = http.post(f"/iceberg/v1/namespaces/{ns}/tables", json={
        "name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "type": "long", "required": True}]}})
    assert created.status_code == 200, created.text
    _refused(http.delete(f"/iceberg/v1/namespaces/{ns}/tables/t", params={"purge": "true"}),
             "purge")
    _refused(http.delete(f"/iceberg/v1/namespaces/{ns}/tables/t",
                         params=[("purgeRequested", "true"), ("purgeRequested", "false")]),
             "purgeRequested")
    assert http.get(f"/iceberg/v1/namespaces/{ns}/tables/t").status_code == 200
    # A webhook registration with a misspelt field is not a webhook for everything.
    _refused(http.post("/api/v2/webhooks", json={"url": "http://127.0.0.1:9/x",
                                                 "type": ["commit"]}),
             "type: Extra inputs are not permitted")
    assert http.get("/api/v2/webhooks").json()["webhooks"] == []


def test_a_merge_takes_nessies_spellings_and_refuses_fields_it_does_not_know(
        store: Store, http: httpx.Client) -> None:
    """Nessie's Java client asks a dry run as ``isDryRun``: while the field
    was ignored, such a merge landed. A field a merge or transplant does not
    know is refused, never ignored; both spellings differing are refused."""
    store.create_reference("spell_src", source="main")
    store.commit("spell_src", [Put(K("spell_ns"), Namespace())], CommitMeta("on src"))
    head = store.get_reference("main").hash
    merge = f"/api/v2/trees/main@{head}/history/merge"
    dry = http.post(merge, json={"fromRefName": "spell_src", "isDryRun": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["wasApplied"] is False
    assert store.get_reference("main").hash == head
    _refused(http.post(merge, json={"fromRefName": "spell_src", "dryRun": False,
                                    "isDryRun": True}), "dryRun", "isDryRun")
    _refused(http.post(merge, json={"fromRefName": "spell_src", "dryrun": True}), "dryrun")
    _refused(http.post(f"/api/v2/trees/main@{head}/history/transplant",
                       json={"hashesToTransplant": [store.get_reference("spell_src").hash],
                             "fromRefName": "spell_src", "dryrun": True}), "dryrun")
    assert store.get_reference("main").hash == head
    landed = http.post(merge, json={"fromRefName": "spell_src", "isDryRun": False})
    assert landed.status_code == 200, landed.text
    assert store.get_reference("main").hash != head
