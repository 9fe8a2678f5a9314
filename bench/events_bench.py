"""Change-feed benchmark (issue 26): what the outbox costs a commit, and
whether reading the feed stays flat as it grows. Ratios against a baseline
in the same run, medians.

    python bench/events_bench.py            # full run (about two minutes)
    python bench/events_bench.py --quick

(a) commits/s on one branch of SQLite (one table append-sized commit each)
    with the outbox written in every commit's transaction, against the same
    store with the event left out (its writer built without the event log),
    alternating rounds: ``events_commit_overhead`` = without ÷ with
(b) one page of 100 events after 10^6 events ÷ after 10^3 (the events
    inserted directly, as a long-lived catalog would have them):
    ``events_page_deep_vs_shallow``
(c) ``webhook_lag_p50_ms``: a real ``sapwood serve`` (SQLite) with a
    webhook to a receiver in this process; one commit at a time over HTTP,
    from the commit's answer to the receiver's getting its event (the
    delivery task looks every 100 ms when something was committed).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.commits import CommitMeta, Put
from core.content import IcebergTable, Namespace
from core.keys import ContentKey
from store import Store
from store.writes import BranchWriter
from tests.server import Server

NS = ContentKey.of("bench")


def without_events(store: Store) -> BranchWriter:
    return BranchWriter(store.db, store.refs, store.reader, store.changes, store.stats,
                        store.locations, store.keys, None)


def commit_rate(store: Store, writer: BranchWriter, n: int, start: int) -> float:
    saved = store.writer
    store.writer = writer
    try:
        t = time.perf_counter()
        for i in range(start, start + n):
            store.commit("main", [Put(ContentKey.of("bench", f"t{i}"),
                                      IcebergTable(metadata_location=f"s3://w/t{i}/m0.json",
                                                   snapshot_id=i))], CommitMeta("append"))
        return n / (time.perf_counter() - t)
    finally:
        store.writer = saved


def page_time(store: Store, after: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        events, _ = store.events.page(after, 100)
        times.append(time.perf_counter() - t)
        assert len(events) == 100
    return statistics.median(times)


def webhook_lags(tmp: Path, n: int) -> list[float]:
    """Seconds from each commit's answer to its event's delivery."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import httpx

    arrived: dict[str, float] = {}
    cond = threading.Condition()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            event = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with cond:
                arrived[event["subject"] + ":" + event["data"]["hashAfter"]] = \
                    time.perf_counter()
                cond.notify_all()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    server = Server(f"sqlite:///{tmp / 'hooks.db'}", tmp / "hooks",
                    extra_env={"SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"}).start()
    lags = []
    try:
        http = httpx.Client(base_url=server.base, timeout=30)
        http.post("/api/v2/webhooks", json={
            "url": f"http://127.0.0.1:{receiver.server_address[1]}/hook"}).raise_for_status()
        for i in range(n):
            # Commits at random moments, not in step with the delivery task's ticks.
            time.sleep(random.uniform(0, 0.1))
            r = http.post("/iceberg/v1/namespaces", json={"namespace": [f"ns{i}"]})
            done = time.perf_counter()
            r.raise_for_status()
            event = "main:" + http.get("/api/v2/trees/main").json()["reference"]["hash"]
            with cond:
                assert cond.wait_for(lambda e=event: e in arrived, 30), "not delivered"
                lags.append(arrived[event] - done)
    finally:
        server.stop()
        receiver.shutdown()
    return lags


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds, per_round, deep = (3, 100, 20_000) if args.quick else (9, 300, 1_000_000)
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-events-bench-"))

    lags = webhook_lags(tmp, 20 if args.quick else 100)
    print(f"webhook delivery after the commit's answer: p50 {statistics.median(lags) * 1e3:.0f}"
          f" ms, p90 {sorted(lags)[int(len(lags) * 0.9)] * 1e3:.0f} ms")

    store = Store(f"sqlite:///{tmp / 'commits.db'}")
    store.commit("main", [Put(NS, Namespace())], CommitMeta("namespace"))
    plain = without_events(store)
    with_rates, without_rates = [], []
    n = 0
    commit_rate(store, store.writer, 100, n)  # warm
    n += 100
    for r in range(rounds):
        for first in ((True, False) if r % 2 else (False, True)):
            rate = commit_rate(store, store.writer if first else plain, per_round, n)
            n += per_round
            (with_rates if first else without_rates).append(rate)
    store.close()
    overhead = statistics.median(without_rates) / statistics.median(with_rates)
    print(f"commits/s with the outbox {statistics.median(with_rates):,.0f}, without "
          f"{statistics.median(without_rates):,.0f}")

    feed = Store(f"sqlite:///{tmp / 'feed.db'}")
    data = json.dumps({"commits": [{"hash": "0" * 64, "parents": [], "author": "bench",
                                    "committer": None, "message": "append",
                                    "createdUs": 0, "operations": [
                                        {"key": ["bench", "t"], "op": "PUT",
                                         "type": "ICEBERG_TABLE", "id": "x", "value": "y"}]}]})
    have = feed.events.last()
    with feed.db.raw_write() as cur:
        cur.executemany(
            "INSERT INTO events (seq, txid, kind, ref, ref_type, old_hash, new_hash, at_us, "
            "principal, data) VALUES (?, 0, 'commit', 'main', 'BRANCH', ?, ?, ?, 'bench', ?)",
            ((have + i, "a" * 64, "b" * 64, i, data) for i in range(1, deep + 1)))
    shallow = page_time(feed, 1_000, 50)
    deeper = page_time(feed, deep - 1_000, 50)
    feed.close()
    print(f"a page of 100 events after 10^3: {shallow * 1e3:.2f} ms, after {deep:,}: "
          f"{deeper * 1e3:.2f} ms")
    print()
    print(f"events_commit_overhead: {overhead:.3f}")
    print(f"events_page_deep_vs_shallow: {deeper / shallow:.2f}")
    print(f"webhook_lag_p50_ms: {statistics.median(lags) * 1e3:.0f}")


if __name__ == "__main__":
    main()
