"""Two ``sapwood serve`` processes on one PostgreSQL and one warehouse behave
as one catalog: 8 writers spread over both, 200 commits each, all land
(fsck clean); a write through one is seen by the next read through the other."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from store import Store
from store.fsck import fsck
from tests.api import spark_bodies as sb
from tests.fixtures import database_url
from tests.http import http_client
from tests.server import Server

WRITERS, COMMITS = 8, 200


@pytest.fixture(scope="module")
def replicas(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
             ) -> Iterator[tuple[Server, Server]]:
    base = tmp_path_factory.mktemp("replicas")
    url = database_url(request, "postgres", base, "replicas")
    warehouse = (base / "warehouse").resolve().as_uri()
    a = Server(url, base / "a", warehouse=warehouse).start()
    b = Server(url, base / "b", warehouse=warehouse).start()
    yield a, b
    for s in (a, b):
        s.stop()
        assert not s.server_errors(), s.server_errors()


def test_writers_over_both_replicas_lose_nothing(replicas: tuple[Server, Server]) -> None:
    a, b = replicas
    failures: list[str] = []

    def writer(i: int) -> None:
        with http_client(base_url=(a, b)[i % 2].base, timeout=60) as c:
            for j in range(COMMITS):
                r = c.post("/iceberg/v1/namespaces", json={"namespace": [f"w{i}_{j}"]})
                if r.status_code != 200:
                    failures.append(f"writer {i} commit {j}: {r.status_code} {r.text}")
                    return

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    for server in (a, b):
        names: set[str] = set()
        token = None
        with http_client(base_url=server.base) as c:
            while True:
                page = c.get("/iceberg/v1/namespaces",
                             params={"pageToken": token} if token else {}).json()
                names |= {n[0] for n in page["namespaces"]}
                token = page.get("next-page-token")
                if not token:
                    break
        assert {f"w{i}_{j}" for i in range(WRITERS) for j in range(COMMITS)} <= names
    store = Store(a.database_url)
    try:
        assert fsck(store).ok
        log = store.log("main", page_size=1000)
        count = len(log.items)
        while log.next_token:
            log = store.log("main", page_token=log.next_token, page_size=1000)
            count += len(log.items)
        assert count >= WRITERS * COMMITS
    finally:
        store.close()


def test_read_your_write_across_replicas(replicas: tuple[Server, Server]) -> None:
    a, b = replicas
    with http_client(base_url=a.base) as ca, http_client(base_url=b.base) as cb:
        assert ca.post("/iceberg/v1/namespaces", json={"namespace": ["ryw"]}).status_code == 200
        for i in range(25):
            writer, reader = (ca, cb) if i % 2 else (cb, ca)
            r = writer.post("/iceberg/v1/namespaces/ryw/tables", json=sb.create_table(f"t{i}"))
            assert r.status_code == 200, r.text
            loaded = reader.get(f"/iceberg/v1/namespaces/ryw/tables/t{i}")
            assert loaded.status_code == 200, loaded.text
            assert loaded.json()["metadata-location"] == r.json()["metadata-location"]
            # And the other way: a branch made on one is usable on the other.
            name = f"ryw{i}"
            head = writer.get("/api/v2/trees/main").json()["reference"]["hash"]
            assert writer.post(f"/api/v2/trees?name={name}&type=BRANCH", json={
                "type": "BRANCH", "name": "main", "hash": head}).status_code == 200
            assert reader.get(f"/iceberg/{name}/v1/namespaces/ryw/tables/t{i}").status_code == 200
