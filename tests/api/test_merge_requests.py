"""A merge is one request (issue 45): the merge route takes its target as a
bare branch name (it lands on the head the server finds; ``name@hash``, as
Nessie's clients send it, still pins it) and ``fromRefName`` as any ref spec,
so ``sapwood merge`` and the Python client (client.Client) send nothing but
the merge. Requests are counted at a loopback proxy in front of the real
server (tests/proxy.py); on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from client import Client, Conflict, NotFound
from tests.api.test_versioning_http import head
from tests.proxy import LossyProxy
from tests.server import Server
from tests.zygote_client import run


@pytest.fixture
def proxy(server: Server) -> Iterator[LossyProxy]:
    with LossyProxy(f"127.0.0.1:{server.port}", rule=lambda m, p: False) as p:
        yield p


def _branch(http: httpx.Client, name: str, ns: str) -> str:
    """Branch ``name`` from main, with namespace ``ns.name`` added on it."""
    r = http.post(f"/api/v2/trees?name={name}",
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    r = http.post(f"/iceberg/{name}/v1/namespaces", json={"namespace": [ns, name]})
    assert r.status_code == 200, r.text
    return head(http, name)


def _sent(proxy: LossyProxy) -> list[tuple[str, str]]:
    return [(m, p.split("?")[0]) for m, p, _ in proxy.received]


def test_sapwood_merge_sends_one_request(server: Server, http: httpx.Client, ns: str,
                                         proxy: LossyProxy) -> None:
    src = f"cli_{ns[-6:]}"
    _branch(http, src, ns)
    env = {"SAPWOOD_URI": proxy.base, "COLUMNS": "200"}
    dry = run(["merge", src, "--into", "main", "--dry-run"], env=env, timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert _sent(proxy) == [("POST", "/api/v2/trees/main/history/merge")]
    done = run(["merge", src, "--into", "main"], env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(proxy.received) == 2
    assert f"merge: main is now at {head(http, 'main')[:12]}" in done.stdout


def test_the_client_merges_in_one_request(server: Server, http: httpx.Client, ns: str,
                                          proxy: LossyProxy) -> None:
    src = f"py_{ns[-6:]}"
    source_head = _branch(http, src, ns)
    before = head(http, "main")
    with Client(proxy.base) as c:
        preview = c.merge(src, "main", dry_run=True)
        assert not preview.applied and preview.keys and preview.conflicts == []
        merged = c.merge(src, "main", message="publish")
    assert len(proxy.received) == 2
    assert merged.applied and merged.hash == head(http, "main") != before
    r = http.get("/api/v2/trees/main/history", params={"maxRecords": 1})
    meta = r.json()["logEntries"][0]["commitMeta"]
    assert meta["message"] == "publish" and meta["parentCommitHashes"][1] == source_head


def test_a_bare_target_lands_on_its_head_and_a_pinned_one_still_checks(
        server: Server, http: httpx.Client, ns: str) -> None:
    src = f"pin_{ns[-6:]}"
    _branch(http, src, ns)
    stale = head(http, "main")
    http.post("/iceberg/main/v1/namespaces", json={"namespace": [ns, "moved"]})
    moved = head(http, "main")
    # Nessie's form: name@expectedHash, a head the target has moved past
    # (an ancestor of it: Nessie merges there too) or its head.
    r = http.post(f"/api/v2/trees/main@{stale}/history/merge",
                  json={"fromRefName": src, "dryRun": True})
    assert r.status_code == 200, r.text
    r = http.post(f"/api/v2/trees/main@{'0' * 64}/history/merge", json={"fromRefName": src})
    assert r.status_code in (404, 409), r.text
    # Bare: the head the server finds.
    r = http.post("/api/v2/trees/main/history/merge", json={"fromRefName": src})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["wasApplied"] and body["effectiveTargetHash"] == moved
    # Not a branch name: a 400 naming what it got; no such branch: a 404.
    r = http.post("/api/v2/trees/main*2020-01-01T00:00:00Z/history/merge",
                  json={"fromRefName": src})
    assert r.status_code == 400 and "needs 'name' or 'name@expectedHash'" in r.text, r.text
    r = http.post("/api/v2/trees/nowhere/history/merge", json={"fromRefName": src})
    assert r.status_code == 404, r.text


def test_the_source_may_be_any_ref_spec(server: Server, http: httpx.Client, ns: str) -> None:
    src = f"spec_{ns[-6:]}"
    first = _branch(http, src, ns)
    r = http.post(f"/iceberg/{src}/v1/namespaces", json={"namespace": [ns, "later"]})
    assert r.status_code == 200, r.text
    with Client(server.base) as c:
        merged = c.merge(f"{src}@{first}", "main")
        assert merged.applied and [k.key for k in merged.keys] == [f"{ns}.{src}"]
        meta = next(c.log("main"))["commitMeta"]
        assert meta["message"] == f"merge {src} into main"
        assert meta["parentCommitHashes"][1] == first
        with pytest.raises(NotFound):
            c.merge("nowhere", "main")


def test_a_conflict_raises_the_servers_409_naming_the_keys(server: Server,
                                                           http: httpx.Client,
                                                           ns: str) -> None:
    src = f"clash_{ns[-6:]}"
    _branch(http, src, ns)
    for ref, value in ((src, "a"), ("main", "b")):
        r = http.post(f"/iceberg/{ref}/v1/namespaces/{ns}/properties",
                      json={"updates": {"owner": value}, "removals": []})
        assert r.status_code == 200, r.text
    with Client(server.base) as c:
        result = c.merge(src, "main", raise_on_conflict=False, dry_run=True)
        assert result.conflicts == [ns] and not result.applied
        with pytest.raises(Conflict) as refused:
            c.merge(src, "main", force=[])
        assert refused.value.status == 409 and refused.value.conflicts == [ns]
        assert ns in refused.value.message

