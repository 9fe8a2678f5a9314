"""View analysis benchmark: what analysing a view costs where it is written,
and whether finding a table's dependents depends on the number of views.

    python bench/view_bench.py            # full run (a few minutes)
    python bench/view_bench.py --quick    # smaller sizes
    python bench/view_bench.py --smoke    # tiny sizes, one round (the suite runs it)

(a) CREATE VIEW of a five-table join through the Iceberg REST API, on a server
    that analyses views and one started with SAPWOOD_VIEW_ANALYSIS=0, requests
    alternating one by one; each view is dropped again so the catalogs stay
    the same size. Ratio of the medians.
(b) GET …/contents/{table}/dependents for a table that 5 views read, in a
    catalog of 10,000 views and in one of 100 (the others read other tables),
    alternating. Ratio of the medians.
Ends with ``view_create_analysis_overhead: <ratio>`` and
``dependents_large_vs_small: <ratio>``.
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

from core.commits import Put  # noqa: E402
from core.content import IcebergView  # noqa: E402
from core.keys import ContentKey  # noqa: E402
from core.sql.stored import DialectAnalysis, StoredDependency  # noqa: E402
from store import Store  # noqa: E402
from tests.api import spark_bodies as sb  # noqa: E402
from tests.server import Server  # noqa: E402

NS = "bench"
TABLES = ["customer", "orders", "lineitem", "supplier", "nation"]
JOIN = ("SELECT c.id, o.name, l.id AS lid, s.name AS sname, n.name AS nname "
        "FROM customer c JOIN orders o ON c.id = o.id JOIN lineitem l ON l.id = o.id "
        "JOIN supplier s ON s.id = l.id JOIN nation n ON n.id = s.id WHERE c.id > {i}")


def call(c: http.client.HTTPConnection, method: str, path: str,
         body: object | None = None) -> tuple[int, bytes, float]:
    t = time.perf_counter()
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    return r.status, data, time.perf_counter() - t


def setup_tables(port: int) -> None:
    c = http.client.HTTPConnection("127.0.0.1", port)
    assert call(c, "POST", "/iceberg/v1/namespaces", {"namespace": [NS]})[0] == 200
    for t in TABLES:
        assert call(c, "POST", f"/iceberg/v1/namespaces/{NS}/tables",
                    sb.create_table(t))[0] == 200
    c.close()


def view_body(name: str, i: int = 0) -> dict:
    # A different text each time: nothing may be answered from a cache.
    body = sb.create_view(name, JOIN.format(i=i))
    body["view-version"]["default-namespace"] = [NS]
    return body


def create_overhead(rounds: int, tmp: Path, warm: int = 10) -> float:
    on = Server(f"sqlite:///{tmp / 'on.db'}", tmp / "on").start()
    off = Server(f"sqlite:///{tmp / 'off.db'}", tmp / "off",
                 extra_env={"SAPWOOD_VIEW_ANALYSIS": "0"}).start()
    try:
        for s in (on, off):
            setup_tables(s.port)
        conns = {s.port: http.client.HTTPConnection("127.0.0.1", s.port) for s in (on, off)}
        times: dict[int, list[float]] = {on.port: [], off.port: []}
        for i in range(rounds + warm):
            for s in ((on, off) if i % 2 else (off, on)):
                c = conns[s.port]
                status, data, took = call(c, "POST", f"/iceberg/v1/namespaces/{NS}/views",
                                          view_body(f"v{i}", i))
                assert status == 200, data
                if i >= warm:  # warm-up
                    times[s.port].append(took)
                status, _, _ = call(c, "DELETE", f"/iceberg/v1/namespaces/{NS}/views/v{i}")
                assert status == 204
        # The analysing server did analyse.
        status, data, _ = call(conns[on.port], "POST", f"/iceberg/v1/namespaces/{NS}/views",
                               view_body("check"))
        got = json.loads(call(conns[on.port], "GET",
                              f"/api/v2/trees/main/contents/{NS}.check")[1])
        assert len(got["content"]["analysis"][0]["dependencies"]) == 5, got
    finally:
        on.stop()
        off.stop()
    a, b = statistics.median(times[on.port]), statistics.median(times[off.port])
    print(f"(a) create view, 5-table join: {a * 1e3:.2f} ms analysed, {b * 1e3:.2f} ms not "
          f"(median of {rounds} each)")
    return a / b


def catalog_with_views(url: str, views: int, warehouse: str, target_id: str) -> None:
    """``views`` views straight into the store (setup, not measured): 5 read
    bench.target (a real table, content id ``target_id``: a view's verdict
    reads its metadata), the others read one of 50 tables that are not
    there. Every location is inside ``warehouse``, the server's: one outside
    is refused (400)."""
    s = Store(url)
    try:
        batch: list[Put] = []
        for i in range(views):
            base = "target" if i < 5 else f"other{i % 50}"
            dep = StoredDependency(key=[NS, base],
                                   content_id=target_id if i < 5 else f"id-{base}",
                                   type="ICEBERG_TABLE")
            batch.append(Put(ContentKey([NS, f"v{i:05d}"]), IcebergView(
                metadata_location=f"{warehouse}/bench/v{i}.metadata.json", version_id=1,
                analysis=[DialectAnalysis(dialect="spark", status="ok",
                                          dependencies=[dep])])))
            if len(batch) == 1000:
                s.commit("main", batch)
                batch = []
        if batch:
            s.commit("main", batch)
    finally:
        s.close()


def dependents_ratio(rounds: int, tmp: Path, large: int, small: int) -> float:
    servers: list[Server] = []
    try:
        for n in (large, small):
            url = f"sqlite:///{tmp / f'deps{n}.db'}"
            servers.append(server := Server(url, tmp / f"deps{n}").start())
            c = http.client.HTTPConnection("127.0.0.1", server.port)
            assert call(c, "POST", "/iceberg/v1/namespaces", {"namespace": [NS]})[0] == 200
            assert call(c, "POST", f"/iceberg/v1/namespaces/{NS}/tables",
                        sb.create_table("target"))[0] == 200
            target = json.loads(call(c, "GET", f"/api/v2/trees/main/contents/{NS}.target")[1])
            c.close()
            catalog_with_views(url, n, server.warehouse, target["content"]["id"])
        path = f"/api/v2/trees/main/contents/{NS}.target/dependents"
        conns = [http.client.HTTPConnection("127.0.0.1", s.port) for s in servers]
        for c in conns:
            status, data, _ = call(c, "GET", path)
            assert status == 200 and len(json.loads(data)["dependents"]) == 5, data
        times: list[list[float]] = [[], []]
        for i in range(rounds):
            for j in ((0, 1) if i % 2 else (1, 0)):
                times[j].append(call(conns[j], "GET", path)[2])
    finally:
        for s in servers:
            s.stop()
    a, b = statistics.median(times[0]), statistics.median(times[1])
    print(f"(b) dependents of a table 5 views read: {a * 1e6:.0f} µs among {large:,} views, "
          f"{b * 1e6:.0f} µs among {small:,} (median of {rounds} each)")
    return a / b


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-view-bench-"))
    create_rounds, warm, dep_rounds, large, small = (
        (1, 1, 1, 20, 10) if args.smoke else (30, 10, 100, 2_000, 100) if args.quick
        else (200, 10, 1_000, 10_000, 100))
    overhead = create_overhead(create_rounds, tmp, warm)
    ratio = dependents_ratio(dep_rounds, tmp, large, small)
    print()
    print(f"view_create_analysis_overhead: {overhead:.2f}")
    print(f"dependents_large_vs_small: {ratio:.2f}")


if __name__ == "__main__":
    main()
