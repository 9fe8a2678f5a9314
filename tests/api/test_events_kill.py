"""Exactly one event per landed change, whatever happens to the servers:
writers committing, merging and moving branches through real servers that
are SIGKILLed at random moments (two replicas on one database, one killed
at a time, ten kills); afterwards the feed and the reflog agree one for one, ids strictly
increase, and pages read while it ran never saw a hole filled later."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from store import Store
from tests.fixtures import BACKENDS, database_url
from tests.http import http_client, http_request
from tests.server import Server

KILLS = 10


def _writer(bases: list[str], i: int, stop: threading.Event) -> None:
    """Commits (namespace properties), branches made, merged and deleted,
    through whichever server answers; errors from a dying server are the point."""
    rng = random.Random(i)
    n = 0
    while not stop.is_set():
        base = rng.choice(bases)
        n += 1
        try:
            with http_client(base_url=base, timeout=5) as http:
                if rng.random() < 0.7:
                    http.post(f"/iceberg/v1/namespaces/w{i}/properties",
                              json={"updates": {"n": str(n)}})
                else:
                    name = f"b{i}_{n}"
                    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
                    http.post("/api/v2/trees", params={"name": name},
                              json={"type": "BRANCH", "name": "main", "hash": head})
                    http.post(f"/iceberg/{name}/v1/namespaces/w{i}/properties",
                              json={"updates": {"on": name}})
                    src = http.get(f"/api/v2/trees/{name}").json()["reference"]["hash"]
                    main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
                    http.post(f"/api/v2/trees/main@{main}/history/merge",
                              json={"fromRefName": name, "fromHash": src})
                    http.delete(f"/api/v2/trees/{name}@{src}")
        except (httpx.HTTPError, ValueError, KeyError):
            time.sleep(0.05)


def _follow(base_of: list[str], seen: list[int], stop: threading.Event) -> None:
    after = 0
    while True:
        try:
            r = http_request("GET", f"{random.choice(base_of)}/api/v2/events",
                             params={"after": after, "maxRecords": 50}, timeout=5)
            events = r.json()["events"]
        except (httpx.HTTPError, ValueError, KeyError):
            time.sleep(0.05)
            continue
        seen.extend(int(e["id"]) for e in events)
        if events:
            after = int(events[-1]["id"])
        elif stop.is_set():
            return


def _order(move: tuple[object, ...]) -> tuple[str, ...]:
    return tuple(str(x or "") for x in move)


@pytest.mark.parametrize("backend", BACKENDS)
def test_servers_killed_at_random_lose_or_repeat_no_event(
        request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> None:
    url = database_url(request, backend, tmp_path)
    # Two replicas on one database (SQLite's WAL serves several processes):
    # one is killed while the other serves, and comes back in the background.
    servers = [Server(url, tmp_path / f"s{i}").start() for i in range(2)]
    stop = threading.Event()
    try:
        with http_client(base_url=servers[0].base, timeout=30) as http:
            for i in range(4):
                assert http.post("/iceberg/v1/namespaces",
                                 json={"namespace": [f"w{i}"]}).status_code == 200
        bases = [s.base for s in servers]
        seen: list[int] = []
        threads = [threading.Thread(target=_writer, args=(bases, i, stop)) for i in range(4)]
        follower = threading.Thread(target=_follow, args=(bases, seen, stop))
        for t in [*threads, follower]:
            t.start()
        rng = random.Random(26)
        restarts: dict[int, threading.Thread] = {}
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.2, 0.8))
            while not (up := [i for i in range(2)
                              if i not in restarts or not restarts[i].is_alive()]):
                time.sleep(0.1)  # both coming back: wait for one
            i = rng.choice(up)
            proc = servers[i].proc
            assert proc is not None
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            restarts[i] = threading.Thread(target=servers[i].start)
            restarts[i].start()
        for t in restarts.values():
            t.join(timeout=120)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=60)
        follower.join(timeout=60)
        store = Store(url)
        try:
            events, _ = store.events.page(0, 100_000)
            with store.db.read() as conn:
                moves = sorted((tuple(r) for r in conn.execute(
                    text("SELECT ref, old_hash, new_hash FROM reflog"))), key=_order)
        finally:
            store.close()
        assert sorted(((e.ref, e.old_hash, e.new_hash) for e in events), key=_order) == moves
        ids = [e.seq for e in events]
        assert ids == list(range(1, len(ids) + 1))  # strictly increasing, no gap
        assert len(ids) > 50, len(ids)  # the writers did write
        assert seen == ids[:len(seen)]  # what was read while it ran, in order, no hole
    finally:
        stop.set()  # the writers end whatever happened
        for s in servers:
            s.stop()
