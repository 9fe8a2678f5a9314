"""A table commit by the length of the table's history (issue 48: a commit's
work on the server, trimmed): through a real ``sapwood serve`` (SQLite, a
local warehouse), the same commit on a table of one snapshot and on one of
``--snapshots``, interleaved.

    python bench/history_bench.py                  # 1 vs 1,000 snapshots
    python bench/history_bench.py --snapshots 300  # 1 vs 300
    python bench/history_bench.py --smoke          # 1 vs 20, one round (the suite runs it)

The long table is made by PyIceberg appends of one row (loading only the
snapshots its refs name, so that the client's own copies of the metadata
stay small while it is built). The commit timed is a raw REST commit that
sets a property: the server applies it to the table's whole metadata,
writes the new metadata file (every snapshot in it) and answers with it,
so a commit on a long history costs at least writing and sending more
bytes. Printed: both medians and ``history_commit_long_vs_short`` (long ÷
short).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import pyarrow as pa

from tests.server import Server

NS = "bench"
ROW = pa.table({"id": pa.array([1], pa.int64())})


def build(server: Server, name: str, snapshots: int) -> None:
    """A table ``name`` with ``snapshots`` snapshots (one row each)."""
    catalog = server.catalog(**{"snapshot-loading-mode": "refs"})
    catalog.create_table((NS, name), ROW.schema)
    for _ in range(snapshots):
        catalog.load_table((NS, name)).append(ROW)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshots", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--per-round", type=int, default=5)
    p.add_argument("--smoke", action="store_true", help="1 vs 20 snapshots, one round of 2")
    args = p.parse_args(argv)
    long_n, rounds, per_round = (20, 1, 2) if args.smoke else \
        (args.snapshots, args.rounds, args.per_round)
    with tempfile.TemporaryDirectory(prefix="history-bench-") as tmp:
        server = Server(f"sqlite:///{Path(tmp) / 'sapwood.db'}", Path(tmp) / "sapwood").start()
        try:
            server.catalog().create_namespace(NS)
            began = time.perf_counter()
            build(server, "short", 1)
            build(server, "long", long_n)
            print(f"# a table of 1 snapshot and one of {long_n}, built in "
                  f"{time.perf_counter() - began:.0f} s; {rounds} rounds of {per_round}",
                  flush=True)
            http = httpx.Client(timeout=60)
            rest = server.catalog().url("namespaces", prefixed=True)

            def commit(table: str) -> float:
                body = {"requirements": [], "updates": [
                    {"action": "set-properties", "updates": {"bench.n": uuid.uuid4().hex}}]}
                began = time.perf_counter()
                r = http.post(f"{rest}/{NS}/tables/{table}", json=body)
                took = time.perf_counter() - began
                assert r.status_code == 200, r.text
                return took

            samples: dict[str, list[float]] = {"short": [], "long": []}
            for rnd in range(rounds):
                for table in (["short", "long"] if rnd % 2 == 0 else ["long", "short"]):
                    commit(table)  # warm
                    samples[table] += [commit(table) for _ in range(per_round)]
            short, long = (statistics.median(samples[t]) for t in ("short", "long"))
            print(f"# commit: 1 snapshot {short * 1000:.2f} ms, "
                  f"{long_n} snapshots {long * 1000:.2f} ms")
            print(f"history_commit_long_vs_short: {long / short:.2f}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
