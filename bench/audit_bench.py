"""Audit benchmark: a view's history, and the log filtered by its key, after
100 and after 100,000 unrelated commits.

    python bench/audit_bench.py            # 100 vs 100,000 (a few minutes)
    python bench/audit_bench.py --quick    # 100 vs 5,000
    python bench/audit_bench.py --smoke    # 10 vs 50, one round (the suite runs it)

Two catalogs on the embedded default (SQLite), each with a view of 5
versions created through the Iceberg REST API, then ``shallow`` or ``deep``
unrelated commits on main (table updates, written straight into the store:
setup, not measured). A ``sapwood serve`` on each answers, requests
alternating between the two:
  GET /api/v2/trees/main/views/bench.v/history                (the audit)
  GET /api/v2/trees/main/history?key=bench.v&maxRecords=50    (log --key)
Ends with ``audit_deep_vs_shallow``, ``log_by_key_deep_vs_shallow`` (ratios
of the medians) and the absolute medians at the deep end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.commits import CommitMeta, Put  # noqa: E402
from core.content import IcebergTable  # noqa: E402
from core.keys import ContentKey  # noqa: E402
from store import Store  # noqa: E402
from tests.api import spark_bodies as sb  # noqa: E402
from tests.server import Server  # noqa: E402

NS = "bench"
AUDIT = f"/api/v2/trees/main/views/{NS}.v/history"
LOG = f"/api/v2/trees/main/history?key={NS}.v&maxRecords=50"


def call(c: http.client.HTTPConnection, method: str, path: str,
         body: object | None = None) -> tuple[int, bytes, float]:
    t = time.perf_counter()
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    return r.status, data, time.perf_counter() - t


def view_with_versions(port: int, versions: int) -> None:
    c = http.client.HTTPConnection("127.0.0.1", port)
    assert call(c, "POST", "/iceberg/v1/namespaces", {"namespace": [NS]})[0] == 200
    status, data, _ = call(c, "POST", f"/iceberg/v1/namespaces/{NS}/views",
                           sb.create_view("v", "SELECT 0 AS a"))
    assert status == 200, data
    uuid = json.loads(data)["metadata"]["view-uuid"]
    for i in range(1, versions):
        status, data, _ = call(c, "POST", f"/iceberg/v1/namespaces/{NS}/views/v",
                               sb.replace_view(uuid, f"SELECT {i} AS a"))
        assert status == 200, data
    c.close()


def unrelated_commits(url: str, n: int) -> None:
    """``n`` commits on main, each updating one of 50 tables the view does not read."""
    s = Store(url)
    try:
        keys = [ContentKey([NS, f"t{i}"]) for i in range(50)]
        cur: dict[ContentKey, IcebergTable] = {}
        for i in range(n):
            k = keys[i % len(keys)]
            old = cur.get(k)
            new = IcebergTable(id=old.id if old else None,
                               metadata_location=f"file:///bench/{k.name}/{i}.json")
            s.commit("main", [Put(k, new, expected=old)], CommitMeta(f"load {i}"))
            # A new table's id is the one the store gave it.
            cur[k] = s.content("main", k) if old is None else new  # type: ignore[assignment]
    finally:
        s.close()


def catalog(tmp: Path, name: str, commits: int) -> Server:
    url = f"sqlite:///{tmp / f'{name}.db'}"
    server = Server(url, tmp / name).start()
    try:
        view_with_versions(server.port, 5)
        t = time.perf_counter()
        unrelated_commits(url, commits)
    except BaseException:
        server.stop()
        raise
    print(f"{name}: {commits:,} unrelated commits written in {time.perf_counter() - t:.0f} s")
    return server


def measure(servers: list[Server], path: str, rounds: int) -> list[float]:
    conns = [http.client.HTTPConnection("127.0.0.1", s.port) for s in servers]
    for c in conns:  # warm-up, and the answers are what they should be
        status, data, _ = call(c, "GET", path)
        assert status == 200, data
        got = json.loads(data)
        assert len(got.get("versions", got.get("logEntries", []))) == 5, got
    times: list[list[float]] = [[], []]
    for i in range(rounds):
        for j in ((0, 1) if i % 2 else (1, 0)):
            times[j].append(call(conns[j], "GET", path)[2])
    return [statistics.median(t) for t in times]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    args = ap.parse_args(argv)
    deep, shallow, rounds = ((50, 10, 1) if args.smoke else (5_000, 100, 30) if args.quick
                             else (100_000, 100, 60))
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-audit-bench-"))
    servers: list[Server] = []
    try:
        servers.append(catalog(tmp, "deep", deep))
        servers.append(catalog(tmp, "shallow", shallow))
        audit = measure(servers, AUDIT, rounds)
        log = measure(servers, LOG, rounds)
    finally:
        for s in servers:
            s.stop()
    print(f"audit of a 5-version view: {audit[0] * 1e3:.2f} ms after {deep:,} commits, "
          f"{audit[1] * 1e3:.2f} ms after {shallow:,} (median of {rounds} each)")
    print(f"log --key of it: {log[0] * 1e3:.2f} ms after {deep:,} commits, "
          f"{log[1] * 1e3:.2f} ms after {shallow:,} (median of {rounds} each)")
    print()
    print(f"audit_deep_vs_shallow: {audit[0] / audit[1]:.2f}")
    print(f"log_by_key_deep_vs_shallow: {log[0] / log[1]:.2f}")
    print(f"audit_p50_ms_at_{deep}: {audit[0] * 1e3:.2f}")
    print(f"log_by_key_p50_ms_at_{deep}: {log[0] * 1e3:.2f}")


if __name__ == "__main__":
    main()
