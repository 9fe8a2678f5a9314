"""Idempotency-Key: a commit whose answer was lost and that is sent again
with its key lands once, and the retry gets the first answer.

Answers are lost by a loopback proxy (tests/proxy.py) that forwards the
commit and drops what the server answered; in the replica tests the server
is SIGKILLed once it has begun to answer (after the commit, before the
client has the answer) and the retry reaches a second replica. PyIceberg
0.12 sends no Idempotency-Key of its own (docs/iceberg-rest.md): the tests
give it one through its ``header.*`` catalog properties, and retry the
lost request as urllib3 does for a client that asks for retries."""

from __future__ import annotations

import os
import signal
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from tests.api import spark_bodies as sb
from tests.fixtures import BACKENDS, database_url
from tests.http import http_client, http_request
from tests.proxy import LossyProxy
from tests.server import Server

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])
KEY_HEADER = "Idempotency-Key"


def new_key() -> str:
    return str(uuid.uuid4())


def retrying(server: Server, base: str, **headers: str) -> RestCatalog:
    """A PyIceberg catalog of ``server`` reached at ``base`` (the proxy),
    sending ``headers``, whose HTTP session sends a request again when its
    answer is lost (urllib3's retry, POST included)."""
    catalog = RestCatalog("retrying", uri=f"{base}/iceberg", **server.client_props,
                          **{f"header.{k}": v for k, v in headers.items()})
    retry = Retry(total=2, connect=0, read=2, status=0, allowed_methods=None,
                  backoff_factor=0.05, raise_on_status=False)
    catalog._session.mount("http://", HTTPAdapter(max_retries=retry))
    return catalog


def is_commit(method: str, path: str) -> bool:
    return method == "POST" and path.endswith("/tables/t")


def replayed_commits(proxy: LossyProxy) -> list[int]:
    """The statuses of the commits the proxy passed on, each answered from
    a kept answer (anything else, a 409 included, shows as such)."""
    return [status if headers.get("idempotent-replayed") == "true" else -status
            for method, path, status, headers in proxy.relayed if is_commit(method, path)]


def commits_on(http: httpx.Client, ref: str = "main") -> list[dict[str, Any]]:
    r = http.get(f"/api/v2/trees/{ref}/history", params={"maxRecords": 100})
    assert r.status_code == 200, r.text
    entries: list[dict[str, Any]] = r.json()["logEntries"]
    return entries


@pytest.fixture(scope="module")
def table(server: Server) -> str:
    cat = server.catalog()
    cat.create_namespace("ns")
    cat.create_table("ns.t", schema=SCHEMA)
    return "ns.t"


def test_config_says_how_long_a_key_holds(http: httpx.Client) -> None:
    config = http.get("/iceberg/v1/config").json()
    assert config["idempotency-key-lifetime"] == "PT30M"


def test_pyiceberg_sends_no_key_of_its_own(server: Server, table: str) -> None:
    """docs/iceberg-rest.md says so: if this fails, PyIceberg has started
    sending Idempotency-Key; say so there, and drop the header.* advice."""
    with LossyProxy(f"127.0.0.1:{server.port}", lambda m, p: False) as proxy:
        t = retrying(server, proxy.base).load_table(table)
        t.append(pa.table({"id": [0]}, schema=SCHEMA))
        t.delete("id = 0")
    writes = [h for m, _, h in proxy.received if m != "GET"]
    assert writes and not any("idempotency-key" in h for h in writes)


def test_a_pyiceberg_append_whose_answer_is_lost_lands_once(server: Server, table: str,
                                                             http: httpx.Client) -> None:
    before = len(commits_on(http))
    snapshots = len(server.catalog().load_table(table).snapshots())
    key = new_key()
    with LossyProxy(f"127.0.0.1:{server.port}", is_commit) as proxy:
        t = retrying(server, proxy.base, **{KEY_HEADER: key}).load_table(table)
        t.append(pa.table({"id": [1, 2, 3]}, schema=SCHEMA))
    # The first answer was lost; urllib3 sent the commit again, and the
    # server answered it from the key: the append returned as if nothing
    # happened. (Without the key the resent commit is refused as stale, and
    # PyIceberg finds its snapshot landed on refreshing: test below.)
    assert [d.status for d in proxy.dropped] == [200]
    assert replayed_commits(proxy) == [200]
    after = server.catalog().load_table(table)
    assert len(after.snapshots()) == snapshots + 1
    assert sorted(after.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert len(commits_on(http)) == before + 1


def _next_append(http: httpx.Client) -> dict[str, Any]:
    """The body Spark sends to append one snapshot to ns.t (its manifest list written)."""
    meta = http.get("/iceberg/v1/namespaces/ns/tables/t").json()["metadata"]
    snapshot_id = meta["current-snapshot-id"] + 1
    sb.write_manifest_list(meta["location"], snapshot_id)
    return sb.append(meta["table-uuid"], snapshot_id, meta["current-snapshot-id"],
                     meta["location"], meta["last-sequence-number"] + 1)


def test_a_resent_commit_without_a_key_is_refused_and_with_one_answered(
        server: Server, http: httpx.Client, table: str) -> None:
    path = "/iceberg/v1/namespaces/ns/tables/t"
    # Without a key: the commit landed, and sent again it is refused as stale.
    body = _next_append(http)
    with LossyProxy(f"127.0.0.1:{server.port}", lambda m, p: p == path) as proxy, \
            pytest.raises(httpx.HTTPError):
        http_request("POST", proxy.base + path, json=body, timeout=60)
    again = http.post(path, json=body)
    assert again.status_code == 409 and again.json()["error"]["type"] == \
        "CommitFailedException", again.text
    # With one: the answer the first one got.
    retry, first = _lost_then_retried(server, "POST", path, _next_append(http))
    assert (retry.status_code, retry.content) == (200, first)
    assert retry.headers["Idempotent-Replayed"] == "true"


def _lost_then_retried(server: Server, method: str, path: str, body: Any,
                       ) -> tuple[httpx.Response, bytes]:
    """Send through the proxy (the answer is lost), then again, straight."""
    key = new_key()
    with LossyProxy(f"127.0.0.1:{server.port}", lambda m, p: p == path) as proxy, \
            pytest.raises(httpx.HTTPError):
        http_request(method, proxy.base + path, json=body, headers={KEY_HEADER: key},
                      timeout=60)
    assert len(proxy.dropped) == 1 and proxy.dropped[0].status == 200, proxy.dropped
    retry = http_request(method, server.base + path, json=body, headers={KEY_HEADER: key},
                          timeout=60)
    return retry, proxy.dropped[0].answer


def test_a_merge_whose_answer_is_lost_lands_once(server: Server, http: httpx.Client,
                                                 table: str) -> None:
    main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    assert http.post("/api/v2/trees", params={"name": "work"},
                     json={"type": "BRANCH", "name": "main", "hash": main}).status_code == 200
    server.catalog("work").create_namespace("merged")
    before = len(commits_on(http))
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    retry, first = _lost_then_retried(server, "POST", f"/api/v2/trees/main@{head}/history/merge",
                                      {"fromRefName": "work"})
    assert retry.status_code == 200, retry.text
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.content == first
    assert len(commits_on(http)) == before + 1  # one merge commit


def test_a_view_create_whose_answer_is_lost_lands_once(server: Server, http: httpx.Client,
                                                       table: str) -> None:
    before = len(commits_on(http))
    retry, first = _lost_then_retried(server, "POST", "/iceberg/v1/namespaces/ns/views",
                                      sb.create_view("v_once", "SELECT id FROM ns.t"))
    assert retry.status_code == 200, retry.text
    assert retry.content == first
    assert len(commits_on(http)) == before + 1
    # And a new key for the same body is a new request: the view exists now.
    again = http.post("/iceberg/v1/namespaces/ns/views", headers={KEY_HEADER: new_key()},
                      json=sb.create_view("v_once", "SELECT id FROM ns.t"))
    assert again.status_code == 409, again.text


def test_a_key_sent_with_another_request_is_refused(http: httpx.Client, table: str) -> None:
    key = new_key()
    first = http.post("/iceberg/v1/namespaces", headers={KEY_HEADER: key},
                      json={"namespace": ["k1"]})
    assert first.status_code == 200, first.text
    before = len(commits_on(http))
    other = http.post("/iceberg/v1/namespaces", headers={KEY_HEADER: key},
                      json={"namespace": ["k2"]})
    assert other.status_code == 422, other.text
    assert "already used for a different request" in other.json()["error"]["message"]
    assert http.get("/iceberg/v1/namespaces/k2").status_code == 404
    assert len(commits_on(http)) == before
    # Not a UUID: 400, nothing done.
    bad = http.post("/iceberg/v1/namespaces", headers={KEY_HEADER: "again"},
                    json={"namespace": ["k3"]})
    assert bad.status_code == 400 and KEY_HEADER in bad.json()["error"]["message"]
    assert http.get("/iceberg/v1/namespaces/k3").status_code == 404


def test_ten_threads_with_one_key_make_one_commit(server: Server, http: httpx.Client,
                                                  table: str) -> None:
    before = len(commits_on(http))
    key = new_key()
    answers: list[tuple[int, bytes]] = []
    start = threading.Barrier(10)
    body = sb.create_view("v_ten", "SELECT id FROM ns.t")

    def send() -> None:
        with http_client(base_url=server.base, timeout=60) as c:
            start.wait()
            r = c.post("/iceberg/v1/namespaces/ns/views", headers={KEY_HEADER: key},
                       json=body)
            answers.append((r.status_code, r.content))

    threads = [threading.Thread(target=send) for _ in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(answers) == 10
    assert {status for status, _ in answers} == {200}, answers[0]
    assert len({body for _, body in answers}) == 1
    assert len(commits_on(http)) == before + 1


def test_a_refusal_is_answered_again_and_a_5xx_is_not_kept(http: httpx.Client,
                                                            table: str) -> None:
    key = new_key()
    body = {"namespace": ["ns"]}  # exists: 409, a final answer
    first = http.post("/iceberg/v1/namespaces", headers={KEY_HEADER: key}, json=body)
    assert first.status_code == 409
    again = http.post("/iceberg/v1/namespaces", headers={KEY_HEADER: key}, json=body)
    assert (again.status_code, again.content) == (409, first.content)
    assert again.headers["Idempotent-Replayed"] == "true"


# -- a server killed after its commit, the retry on another replica -------------------
@dataclass
class Replicas:
    a: Server  # killed
    b: Server  # answers the retries
    url: str
    warehouse: str
    tmp: Path


@pytest.fixture(params=BACKENDS)
def replicas(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Replicas]:
    url = database_url(request, request.param, tmp_path / "db", "once")
    warehouse = (tmp_path / "warehouse").resolve().as_uri()
    a = Server(url, tmp_path / "a", warehouse=warehouse).start()
    b = Server(url, tmp_path / "b", warehouse=warehouse).start()
    yield Replicas(a, b, url, warehouse, tmp_path)
    for s in (a, b):
        s.stop()
    assert not b.server_errors(), b.server_errors()


def _kill(server: Server) -> None:
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait()


def test_killed_after_the_commit_the_retry_on_a_replica_gets_the_answer(
        replicas: Replicas) -> None:
    a, b = replicas.a, replicas.b
    cat = b.catalog()
    cat.create_namespace("ns")
    cat.create_table("ns.t", schema=SCHEMA)
    key = new_key()
    with LossyProxy(f"127.0.0.1:{a.port}", is_commit) as proxy:
        def kill_a_then_use_b() -> None:
            _kill(a)  # it has committed and begun to answer
            proxy.upstream = f"127.0.0.1:{b.port}"

        proxy.on_drop = kill_a_then_use_b
        t = retrying(a, proxy.base, **{KEY_HEADER: key}).load_table("ns.t")
        t.append(pa.table({"id": [7, 8]}, schema=SCHEMA))
    assert [d.status for d in proxy.dropped] == [200]
    assert replayed_commits(proxy) == [200]
    after = b.catalog().load_table("ns.t")
    assert len(after.snapshots()) == 1
    assert sorted(after.scan().to_arrow()["id"].to_pylist()) == [7, 8]


def _killed_then_retried(replicas: Replicas, name: str, method: str, path: str,
                         body: Any) -> httpx.Response:
    """Sent to a new replica that is killed once it has begun to answer;
    sent again, with the key, to replica b."""
    victim = Server(replicas.url, replicas.tmp / name, warehouse=replicas.warehouse).start()
    key = new_key()
    with LossyProxy(f"127.0.0.1:{victim.port}", lambda m, p: p == path,
                    on_drop=lambda: _kill(victim)) as proxy, pytest.raises(httpx.HTTPError):
        http_request(method, proxy.base + path, json=body, headers={KEY_HEADER: key},
                      timeout=60)
    assert [d.status for d in proxy.dropped] == [200]
    retry = http_request(method, replicas.b.base + path, json=body,
                          headers={KEY_HEADER: key}, timeout=60)
    assert retry.headers.get("Idempotent-Replayed") == "true", retry.text
    return retry


def test_a_view_create_and_a_merge_killed_after_the_commit(replicas: Replicas) -> None:
    b = replicas.b
    with http_client(base_url=b.base, timeout=60) as http:
        assert http.post("/iceberg/v1/namespaces", json={"namespace": ["ns"]}).status_code == 200
        before = len(commits_on(http))
        body = sb.create_view("v", "SELECT 1")
        retry = _killed_then_retried(replicas, "v", "POST", "/iceberg/v1/namespaces/ns/views",
                                     body)
        assert retry.status_code == 200, retry.text
        assert http.get("/iceberg/v1/namespaces/ns/views/v").json()["metadata-location"] == \
            retry.json()["metadata-location"]
        assert len(commits_on(http)) == before + 1

        main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
        assert http.post("/api/v2/trees", params={"name": "work"}, json={
            "type": "BRANCH", "name": "main", "hash": main}).status_code == 200
        assert http.post("/iceberg/work/v1/namespaces",
                         json={"namespace": ["merged"]}).status_code == 200
        before = len(commits_on(http))
        retry = _killed_then_retried(replicas, "m", "POST",
                                     f"/api/v2/trees/main@{main}/history/merge",
                                     {"fromRefName": "work"})
        assert retry.status_code == 200, retry.text
        assert len(commits_on(http)) == before + 1
        assert http.get("/iceberg/v1/namespaces/merged").status_code == 200
