"""A read at a commit past retention with 10^4 references (issue 43, defect
11), for bench/rest_bench.py: the catalog of tests/api/expired_setup.py
(10^4 tags and branches, every branch keeping its newest 5 commits), a
real server, and the p50 of ``GET /iceberg/v1/main~10/namespaces/ns`` (a
410) one request after another; beside it the same read within retention
(``main~4``) and at the head. Goal: ``expired_read_p50_ms`` at most 5.

    python bench/expired_read.py [--postgres]   # on its own
    python bench/expired_read.py --smoke        # 100 references, a few reads (the suite)
"""

from __future__ import annotations

import argparse
import http.client
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.api.expired_setup import EXPIRED, KEPT, REFS, build  # noqa: E402
from tests.server import Server  # noqa: E402

HEAD = "/iceberg/v1/namespaces/ns"


def _p50_ms(port: int, path: str, n: int, status: int) -> float:
    c = http.client.HTTPConnection("127.0.0.1", port)
    took = []
    for _ in range(n):
        t = time.perf_counter()
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        took.append(time.perf_counter() - t)
        assert r.status == status, (path, r.status)
    c.close()
    return sorted(took)[len(took) // 2] * 1000


def expired_reads(url: str, data_dir: Path, n: int, refs: int = REFS,
                  warm: int = 20) -> dict[str, float]:
    """p50 in ms of the expired read, the kept one and the head's, on a new
    catalog at ``url`` with ``refs`` references."""
    build(url, refs)
    srv = Server(url, data_dir).start()
    try:
        for path, status in ((EXPIRED, 410), (KEPT, 200), (HEAD, 200)):  # warm
            _p50_ms(srv.port, path, warm, status)
        return {"expired": _p50_ms(srv.port, EXPIRED, n, 410),
                "kept": _p50_ms(srv.port, KEPT, n, 200),
                "head": _p50_ms(srv.port, HEAD, n, 200)}
    finally:
        srv.stop()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", action="store_true", help="a PostgreSQL the bench starts")
    ap.add_argument("--postgres-url", help="an empty PostgreSQL database to use instead")
    ap.add_argument("-n", type=int)
    ap.add_argument("--smoke", action="store_true", help="100 references, a few reads")
    args = ap.parse_args(argv)
    n = args.n or (5 if args.smoke else 400)
    refs, warm = (100, 1) if args.smoke else (REFS, 20)
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-expired-bench-"))
    if args.postgres_url:
        got = expired_reads(args.postgres_url, tmp, n, refs, warm)
    elif args.postgres:
        from tests.pg import TempPostgres

        pg = TempPostgres()
        pg.start()
        try:
            got = expired_reads(pg.create_database("expired"), tmp, n, refs, warm)
        finally:
            pg.stop()
    else:
        got = expired_reads(f"sqlite:///{tmp / 'sapwood.db'}", tmp, n, refs, warm)
    print(f"read past retention (410): p50 {got['expired']:.2f} ms; within retention "
          f"{got['kept']:.2f} ms; at the head {got['head']:.2f} ms")
    print(f"expired_read_p50_ms: {got['expired']:.2f}")


if __name__ == "__main__":
    main()
