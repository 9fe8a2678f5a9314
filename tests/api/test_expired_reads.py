"""A read at a commit past retention, in a catalog of 10^4 references
(issue 43, defect 11): it is refused (410) quickly — the references that
could retain the commit are looked up (store.cutoff_index), not walked —
and its store work never runs on the event loop, so a concurrent
``/healthz`` is never held up behind it. The catalog is moved in as an
export (``store.dump``, what ``sapwood import`` runs): 5,000 tags and 5,000
branches, none of which holds the expired commit; every branch keeps its
newest 5 commits. SQLite and PostgreSQL. Speed itself is
measured by bench/rest_bench.py (``expired_read_p50_ms``)."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from pathlib import Path

import httpx

from core.retention import Policy
from store import Store
from store.db import Database
from store.dump import export_rows, import_rows
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server
from tests.store.helpers import Clock, with_ns

REFS = 10_000
EXPIRED = "/iceberg/v1/main~10/namespaces/ns"
# Far above what the look-up costs, far below what walking every reference
# cost (0.9 to 1.7 s on this machine): generous for a loaded machine.
READ_BOUND_S = 0.4
HEALTHZ_BOUND_S = 0.2


def _catalog(url: str) -> None:
    """``main`` with 21 commits made a day ago, and 10^4 references at its
    oldest commits (shallower than the expired one), moved into ``url``."""
    with tempfile.TemporaryDirectory() as tmp:
        clock = Clock()
        clock.now = time.time_ns() // 1000 - 86_400_000_000
        src = Store(f"sqlite:///{Path(tmp) / 'src.db'}", clock=clock)
        try:
            with_ns(src, "main", "ns")
            for i in range(20):
                clock.tick()
                with_ns(src, "main", f"ns.n{i:02}")
            old = [src.resolve(f"main~{n}").hash for n in range(16, 21)]
            lines = list(export_rows(src.db))
        finally:
            src.close()
    main_row = next(json.loads(x)["r"] for x in lines[1:]
                    if json.loads(x)["t"] == "refs" and json.loads(x)["r"]["name"] == "main")
    for i in range(REFS):
        kind, name = ("TAG", f"t/{i:05}") if i % 2 else ("BRANCH", f"b/{i:05}")
        lines.append(json.dumps({"t": "refs", "r": {**main_row, "name": name, "type": kind,
                                                     "head": old[i % len(old)]}}))
    Store(url).close()  # the target's schema
    db = Database(url)
    try:
        import_rows(db, lines)
    finally:
        db.dispose()
    s = Store(url)
    try:
        s.retention.replace([Policy("*", keep_commits=5)])
    finally:
        s.close()


server = server_fixture(BACKENDS, prepare=_catalog, prefix="expired")


def _timed(http: httpx.Client, path: str) -> tuple[float, httpx.Response]:
    t = time.perf_counter()
    r = http.get(path)
    return time.perf_counter() - t, r


def test_an_expired_read_is_refused_quickly_and_holds_up_nothing(server: Server) -> None:
    with http_client(base_url=server.base, timeout=60) as http:
        assert http.get("/iceberg/v1/main~4/namespaces/ns").status_code == 200  # kept
        took, r = _timed(http, EXPIRED)
        assert r.status_code == 410, r.text
        assert r.json()["error"]["type"] == "HistoryExpiredException"
        assert "retention of 'main'" in r.json()["error"]["message"]
        assert took < READ_BOUND_S, took
    reads: list[float] = []
    probes: list[float] = []
    done = threading.Event()

    def read() -> None:
        with http_client(base_url=server.base, timeout=60) as c:
            for _ in range(8):
                took, r = _timed(c, EXPIRED)
                assert r.status_code == 410, r.text
                reads.append(took)

    def probe() -> None:
        with http_client(base_url=server.base, timeout=60) as c:
            while not done.is_set():
                took, r = _timed(c, "/healthz")
                assert r.status_code == 200
                probes.append(took)
                time.sleep(0.01)

    prober = threading.Thread(target=probe)
    prober.start()
    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    done.set()
    prober.join()
    assert len(reads) == 24 and max(reads) < READ_BOUND_S, sorted(reads)[-5:]
    assert probes and max(probes) < HEALTHZ_BOUND_S, sorted(probes)[-5:]
