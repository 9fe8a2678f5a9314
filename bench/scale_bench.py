"""Scale benchmark (issue 28): the same operations on a small catalog and a
large one, through a real ``sapwood serve`` on SQLite, side by side.

    python bench/scale_bench.py            # 10^4 keys / 10 branches vs 10^6 / 1,000
    python bench/scale_bench.py --quick    # 10^4 vs 10^5 keys and 100 branches
    python bench/scale_bench.py --smoke    # tiny catalogs, one run (the suite runs it)

Both catalogs have 1,000 namespaces (10 tables each at 10^4, 1,000 at 10^6),
so a listing of namespaces returns the same at both sizes.

Each catalog is built as a bulk load would write it (10,000 puts a commit),
after 60 small commits (a log page is full at both sizes), with a namespace
``wide`` of 1,000 tables at both sizes (a page of tables is full at both),
plus a namespace ``bench`` of real tables and a view made through the REST
API, and branches. Every operation is timed 25
times after 3 warm-ups; the ratio of the medians large ÷ small is printed as
``scale_<op>_large_vs_small``. Then ``sapwood fsck`` runs on the large
catalog (its peak RSS: ``scale_fsck_rss_mb``; with ``--parallel``, both its
processes together: ``scale_fsck_parallel_rss_mb``) and the server's RSS
after the run is read (``scale_server_rss_mb``; its caches' budget is
SAPWOOD_CACHE_BYTES, 256 MB by default).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from core.commits import CommitMeta, Put
from core.content import IcebergTable, Namespace
from core.keys import ContentKey
from store import Store
from tests.api import spark_bodies as sb
from tests.peak_memory import run_measured
from tests.processes import rss_mb as resident_mb
from tests.server import Server, sapwood_command

PER_COMMIT = 10_000
RUNS, WARM = 25, 3


def build(tmp: Path, namespaces: int, tables: int, branches: int, wide: int = 1000) -> str:
    """A catalog of namespaces x tables keys, bulk-loaded, ``wide`` tables in
    namespace ``wide``, and branches."""
    url = f"sqlite:///{tmp / 'sapwood.db'}"
    store = Store(url)
    started = time.perf_counter()
    store.commit("main", [Put(ContentKey.of(name), Namespace()) for name in (
        "pre", "wide", *(f"ns{i:04}" for i in range(namespaces)))], CommitMeta("namespaces"))
    # Small commits first, so that a log page is full at both sizes (and at
    # the large one, made of bulk commits).
    for i in range(60):
        store.commit("main", [Put(ContentKey.of("pre", f"t{i}"), IcebergTable(
            metadata_location=f"s3://w/pre/{i}.json"))], CommitMeta(f"small change {i}"))
    batch: list[Put] = []
    # ``wide``: a namespace of 1,000 tables at both sizes (a full page of them).
    cells = [("wide", j) for j in range(wide)] + [
        (f"ns{i:04}", j) for i in range(namespaces) for j in range(tables)]
    for ns, j in cells:
        batch.append(Put(ContentKey.of(ns, f"t{j:04}"),
                         IcebergTable(metadata_location=f"s3://w/{ns}/t{j}/m.json")))
        if len(batch) == PER_COMMIT:
            store.commit("main", batch, CommitMeta("bulk load"))
            batch = []
    if batch:
        store.commit("main", batch, CommitMeta("bulk load"))
    for b in range(branches):
        store.create_reference(f"team{b % 10}/b{b:04}")
    store.close()
    print(f"  built {namespaces * (tables + 1) + wide + 62:,} keys and {branches} branches in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    return url


def prepare(server: Server) -> dict[str, str]:
    """Real tables and a view in ``bench``, a branch with one change."""
    http = httpx.Client(base_url=server.base, timeout=60)
    assert http.post("/iceberg/v1/namespaces", json={"namespace": ["bench"]}).is_success
    for name in ("t", "u"):
        r = http.post("/iceberg/v1/namespaces/bench/tables", json=sb.create_table(name))
        assert r.is_success, r.text
    made = http.post("/iceberg/v1/namespaces/bench/views",
                     json=sb.create_view("v", "SELECT id FROM bench.t"))
    assert made.is_success, made.text
    uuid = made.json()["metadata"]["view-uuid"]
    for i in range(3):
        assert http.post("/iceberg/v1/namespaces/bench/views/v", json=sb.replace_view(
            uuid, f"SELECT id + {i} AS id FROM bench.t")).is_success
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    assert http.post("/api/v2/trees", params={"name": "feature"},
                     json={"type": "BRANCH", "name": "main", "hash": head}).is_success
    assert http.post("/iceberg/feature/v1/namespaces/bench/tables",
                     json=sb.create_table("w")).is_success
    return {"head": head}


def operations(http: httpx.Client) -> dict[str, Callable[[], httpx.Response]]:
    counter = iter(range(10**9))

    def commit() -> httpx.Response:
        return http.post("/iceberg/v1/namespaces", json={"namespace": [f"c{next(counter)}"]})

    def merge_dry_run() -> httpx.Response:
        head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
        return http.post(f"/api/v2/trees/main@{head}/history/merge",
                         json={"fromRefName": "feature", "dryRun": True})

    return {
        "list_namespaces_page": lambda: http.get("/iceberg/v1/namespaces",
                                                 params={"pageSize": 100}),
        "list_namespaces_unpaged": lambda: http.get("/iceberg/v1/namespaces"),
        "list_tables": lambda: http.get("/iceberg/v1/namespaces/wide/tables",
                                        params={"pageSize": 100}),
        "log_main": lambda: http.get("/api/v2/trees/main/history", params={"maxRecords": 50}),
        "ui_log": lambda: http.get("/ui/log/main"),
        "ui_refs": lambda: http.get("/ui"),
        "refs_default": lambda: http.get("/api/v2/trees"),
        # A page the same size at both (the small catalog has 11 references).
        "refs_page_10": lambda: http.get("/api/v2/trees", params={"maxRecords": 10}),
        "load_table": lambda: http.get("/iceberg/v1/namespaces/bench/tables/t"),
        "load_view": lambda: http.get("/iceberg/v1/namespaces/bench/views/v"),
        "table_page": lambda: http.get("/ui/object/main/bench.t"),
        "diff": lambda: http.get("/api/v2/trees/main/diff/feature"),
        "merge_dry_run": merge_dry_run,
        "commit": commit,
        "audit": lambda: http.get("/api/v2/trees/main/views/bench.v/history"),
        "log_by_key": lambda: http.get("/api/v2/trees/main/history",
                                       params={"key": "bench.t", "maxRecords": 50}),
        "ui_browse": lambda: http.get("/ui/tree/main"),
        "ui_browse_namespace": lambda: http.get("/ui/tree/main", params={"prefix": "wide"}),
        "entries_page": lambda: http.get("/api/v2/trees/main/entries",
                                         params={"maxRecords": 100}),
    }


def timings(server: Server, runs: int = RUNS, warm: int = WARM) -> dict[str, float]:
    """Each operation's median time in seconds (and a check of its answer)."""
    http = httpx.Client(base_url=server.base, timeout=120)
    out = {}
    for name, op in operations(http).items():
        times = []
        for i in range(warm + runs):
            t = time.perf_counter()
            r = op()
            took = time.perf_counter() - t
            assert r.is_success, (name, r.status_code, r.text[:300])
            if i >= warm:
                times.append(took)
        out[name] = statistics.median(times)
    return out


def rss_mb(pid: int) -> float:
    found = resident_mb(pid)
    return float("nan") if found is None else found


def fsck_rss_mb(url: str, *args: str) -> tuple[float, float, str]:
    """Peak RSS (MB) of ``sapwood fsck`` on the catalog, every process it
    runs together (each at its own peak), its time and its first line of findings. Read
    from each process's VmHWM (tests/peak_memory.py), not from ru_maxrss:
    that would count this process's own memory (the catalog it built; it
    printed 1.5 GB for an fsck of 356 MB)."""
    m = run_measured([*sapwood_command(), "fsck", "--database", url, *args])
    assert m.returncode == 0, m.output
    # A database verb names the catalog it opened first (on stderr, merged here).
    lines = [ln for ln in m.output.strip().splitlines() if not ln.startswith("database: ")]
    return m.total_mb, m.seconds, lines[0]


def run(tmp: Path, label: str, namespaces: int, tables: int, branches: int, wide: int = 1000,
        runs: int = RUNS, warm: int = WARM) -> tuple[dict[str, float], str, float]:
    print(f"{label}: {namespaces} namespaces x {tables} tables, {branches} branches",
          flush=True)
    url = build(tmp, namespaces, tables, branches, wide)
    server = Server(url, tmp / "srv").start(timeout=300)
    try:
        prepare(server)
        found = timings(server, runs, warm)
        server_rss = rss_mb(server.proc.pid) if server.proc else float("nan")
    finally:
        server.stop()
    return found, url, server_rss


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny catalogs, one run")
    args = ap.parse_args(argv)
    # The same 1,000 namespaces at both sizes (a listing returns as many);
    # what grows is what lies below them, and the branches.
    small = (20, 2, 2) if args.smoke else (1000, 10, 10)
    large = (20, 5, 5) if args.smoke else (1000, 100, 100) if args.quick else (1000, 1000, 1000)
    each = {"wide": 100, "runs": 1, "warm": 1} if args.smoke else {}
    base = Path(tempfile.mkdtemp(prefix="sapwood-scale-"))
    (base / "small").mkdir()
    (base / "large").mkdir()
    a, _, _ = run(base / "small", "small", *small, **each)
    b, url, server_rss = run(base / "large", "large", *large, **each)
    fsck_rss, fsck_s, fsck_line = fsck_rss_mb(url)
    parallel_rss, parallel_s, _ = fsck_rss_mb(url, "--parallel")
    print()
    print(f"{'operation':28} {'small p50 ms':>13} {'large p50 ms':>13} {'ratio':>7}")
    for name in a:
        print(f"{name:28} {a[name] * 1e3:13.2f} {b[name] * 1e3:13.2f} {b[name] / a[name]:7.2f}")
    print(f"fsck of the large catalog: {fsck_s:.1f} s, peak RSS {fsck_rss:.0f} MB ({fsck_line}); "
          f"--parallel: {parallel_s:.1f} s, {parallel_rss:.0f} MB (its processes together)")
    print()
    for name in a:
        print(f"scale_{name}_large_vs_small: {b[name] / a[name]:.2f}")
    print(f"scale_fsck_rss_mb: {fsck_rss:.0f}")
    print(f"scale_fsck_parallel_rss_mb: {parallel_rss:.0f}")
    print(f"scale_server_rss_mb: {server_rss:.0f}")


if __name__ == "__main__":
    main()
