"""A read at a commit past retention, in a catalog of 10^4 references
(issue 43, defect 11; tests/api/expired_setup.py): it is refused (410)
quickly — the references that could retain the commit are looked up
(store.cutoff_index), not walked — and its store work never runs on the
event loop, so a concurrent ``/healthz`` is never held up behind it. SQLite
and PostgreSQL. Speed itself is measured by bench/rest_bench.py
(``expired_read_p50_ms``)."""

from __future__ import annotations

import threading
import time

import httpx

from tests.api.expired_setup import EXPIRED, KEPT, build
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

# Far above what the look-up costs, far below what walking every reference
# cost (0.9 to 1.7 s on this machine): generous for a loaded machine.
READ_BOUND_S = 0.4
HEALTHZ_BOUND_S = 0.2


server = server_fixture(BACKENDS, prepare=build, prefix="expired")


def _timed(http: httpx.Client, path: str) -> tuple[float, httpx.Response]:
    t = time.perf_counter()
    r = http.get(path)
    return time.perf_counter() - t, r


def test_an_expired_read_is_refused_quickly_and_holds_up_nothing(server: Server) -> None:
    with http_client(base_url=server.base, timeout=60) as http:
        assert http.get(KEPT).status_code == 200
        took, r = _timed(http, EXPIRED)
        assert r.status_code == 410, r.text
        assert r.json()["error"]["type"] == "HistoryExpiredException"
        assert "retention of 'main'" in r.json()["error"]["message"]
        assert took < READ_BOUND_S, took
        # Answered on the hot path (api.hot_reads) as the route answers it.
        routed = http.get(EXPIRED, params={"via": "route"})
        assert (routed.status_code, routed.content) == (r.status_code, r.content)
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
