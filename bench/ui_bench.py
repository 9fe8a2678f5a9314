"""Web UI benchmark: each page's server time on a catalog with 10,000 keys
and 10,000 commits, read from the server's own ``Server-Timing`` header.

    python bench/ui_bench.py            # full run (a few minutes)
    python bench/ui_bench.py --quick    # 1,000 keys and commits
    python bench/ui_bench.py --smoke    # 50 keys, 10 commits, one request a page (the suite)

The catalog is written straight into the store (setup, not measured), plus a
view with 4 versions through the Iceberg REST API. Each page is requested 30
times after a warm-up; the median per page is printed as
``ui_page_p50_ms_<page>: <ms>`` (goal: ≤ 50 ms each).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from core.commits import CommitMeta, Put  # noqa: E402
from core.content import IcebergTable, Namespace  # noqa: E402
from core.keys import ContentKey  # noqa: E402
from store import Store  # noqa: E402
from tests.api import spark_bodies as sb  # noqa: E402
from tests.server import Server  # noqa: E402


def build(url: str, keys: int, commits: int) -> None:
    s = Store(url)
    try:
        s.commit("main", [Put(ContentKey(["sales"]), Namespace())], CommitMeta("ns"))
        batch = []
        for i in range(keys):
            batch.append(Put(ContentKey(["sales", f"t{i:05d}"]),
                             IcebergTable(metadata_location=f"file:///bench/t{i}.json")))
            if len(batch) == 2_000:
                s.commit("main", batch, CommitMeta("bulk"))
                batch = []
        if batch:
            s.commit("main", batch, CommitMeta("bulk"))
        k = ContentKey(["sales", "hot"])
        cur = None
        for i in range(commits):
            new = IcebergTable(id=cur.id if cur else None,
                               metadata_location=f"file:///bench/hot/{i}.json")
            s.commit("main", [Put(k, new, expected=cur)],
                     CommitMeta(f"load {i}", author=("ana", "bo")[i % 2]))
            cur = s.content("main", k) if cur is None else new
    finally:
        s.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="50 keys, 10 commits, one request")
    args = ap.parse_args(argv)
    keys, commits, warm, runs = ((50, 10, 1, 1) if args.smoke else (1_000, 1_000, 3, 30)
                                 if args.quick else (10_000, 10_000, 3, 30))
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-ui-bench-"))
    url = f"sqlite:///{tmp / 'ui.db'}"
    t = time.perf_counter()
    build(url, keys, commits)
    print(f"catalog: {keys:,} keys, {commits:,} commits, built in "
          f"{time.perf_counter() - t:.0f} s")
    server = Server(url, tmp).start()
    try:
        http = httpx.Client(base_url=server.base, timeout=60)
        r = http.post("/iceberg/v1/namespaces/sales/views",
                      json=sb.create_view("daily", "SELECT 1 AS n"))
        uuid = r.json()["metadata"]["view-uuid"]
        for i in range(2, 5):
            http.post("/iceberg/v1/namespaces/sales/views/daily",
                      json=sb.replace_view(uuid, f"SELECT {i} AS n"))
        head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
        pages = {
            "references": "/ui",
            "log": "/ui/log/main",
            "log_by_key": "/ui/log/main?key=sales.daily",
            "commit": f"/ui/commit/{head}",
            "browse": "/ui/tree/main?prefix=sales",
            "view": "/ui/object/main/sales.daily?a=1&b=4",
            "diff": "/ui/diff?from=main~5&to=main",
            "merge_preview": "/ui/merge?from=main~5&into=main",
        }
        results = {}
        for name, path in pages.items():
            times = []
            for i in range(warm + runs):
                r = http.get(path)
                assert r.status_code == 200, (path, r.status_code, r.text[:300])
                if i >= warm:
                    dur = r.headers["server-timing"].split("dur=")[1]
                    times.append(float(dur))
            results[name] = statistics.median(times)
    finally:
        server.stop()
    print(json.dumps({k: round(v, 2) for k, v in results.items()}))
    print()
    for name, ms in results.items():
        print(f"ui_page_p50_ms_{name}: {ms:.2f}")


if __name__ == "__main__":
    main()
