"""Change-feed benchmark (issue 26): what the outbox costs a commit, and
whether reading the feed stays flat as it grows. Ratios against a baseline
in the same run, medians.

    python bench/events_bench.py            # full run (about two minutes)
    python bench/events_bench.py --quick
    python bench/events_bench.py --hidden-only   # (d) alone
    python bench/events_bench.py --smoke   # tiny sizes, one round (the suite runs it)

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
(d) a real ``sapwood serve`` (SQLite, authentication on) over 10^5 events,
    one in a hundred on ``main``, the rest on a branch ``reader`` may not
    read: ``events_page_hidden_vs_visible`` = a page (maxRecords=100, from
    a random cursor) for ``reader`` ÷ the same page for ``admin``, who sees
    everything, alternating, medians; ``loop_block_ms_during_hidden_scan``
    = p99 of an admin's loadTable while another client asks for reader's
    pages back to back (from random cursors, maxRecords 1 and 1000 in turn).
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


def hidden_feed(tmp: Path, n: int, rounds: int, reads: int, warm: int = 10) -> dict[str, float]:
    """(d): page times for a reader who sees 1 % of ``n`` events and for an
    admin, and loadTable latencies with and without reader's pages beside."""
    import httpx
    import pyarrow as pa

    from catalog.access import create_key

    url = f"sqlite:///{tmp / 'hidden.db'}"
    store = Store(url)
    store.auth.create_principal("admin")
    for p in ("read", "write", "create-reference"):
        store.auth.add_grant("admin", p, "*")
    store.auth.create_principal("reader")
    store.auth.add_grant("reader", "read", "main", ("sales",))
    keys = {who: create_key(store, who) for who in ("admin", "reader")}
    ops = {ref: [{"key": key, "op": "PUT", "type": "NAMESPACE", "id": "x", "value": "y"}]
           for ref, key in (("main", ["sales", "n"]), ("secret", ["hr", "n"]))}

    def data(ref: str) -> str:
        return json.dumps({"commits": [{"hash": "0" * 64, "parents": [], "author": "bench",
                                        "committer": None, "message": "change",
                                        "createdUs": 0, "operations": ops[ref]}]})

    have = store.events.last()
    with store.db.raw_write() as cur:
        cur.executemany(
            "INSERT INTO events (seq, txid, kind, ref, ref_type, old_hash, new_hash, at_us, "
            "principal, data) VALUES (?, 0, 'commit', ?, 'BRANCH', ?, ?, ?, 'bench', ?)",
            ((have + i, ref, "a" * 64, "b" * 64, i, data(ref))
             for i in range(1, n + 1) for ref in ["main" if i % 100 == 0 else "secret"]))
    store.close()
    server = Server(url, tmp / "hidden", extra_env={"SAPWOOD_AUTH": "1"}).start()
    out: dict[str, float] = {}
    try:
        def as_(who: str) -> httpx.Client:
            return httpx.Client(base_url=server.base, timeout=60,
                                headers={"Authorization": f"Bearer {keys[who]}"})

        admin, reader = as_("admin"), as_("reader")
        cat = server.catalog(credential=keys["admin"])
        cat.create_namespace("sales")
        cat.create_table("sales.t", pa.schema([pa.field("id", pa.int64())]))

        def page(client: httpx.Client, after: int, size: int = 100) -> float:
            t = time.perf_counter()
            r = client.get("/api/v2/events", params={"after": after, "maxRecords": size})
            took = time.perf_counter() - t
            r.raise_for_status()
            return took

        for _ in range(warm):  # warm both
            page(reader, random.randrange(n // 2)), page(admin, random.randrange(n // 2))
        hidden_t, visible_t = [], []
        tail = min(20_000, n // 5)  # a cursor leaves this many events after it
        for r in range(rounds):
            after = random.randrange(n - tail)
            for who in (("reader", "admin") if r % 2 else ("admin", "reader")):
                (hidden_t if who == "reader" else visible_t).append(
                    page(reader if who == "reader" else admin, after))
        out["hidden_ms"] = statistics.median(hidden_t) * 1e3
        out["visible_ms"] = statistics.median(visible_t) * 1e3

        def load_times(count: int) -> list[float]:
            times = []
            for _ in range(count):
                t = time.perf_counter()
                admin.get("/iceberg/v1/namespaces/sales/tables/t").raise_for_status()
                times.append(time.perf_counter() - t)
            return sorted(times)

        load_times(warm * 5)
        quiet = load_times(reads)
        stop, scanning = threading.Event(), threading.Event()
        scans: list[float] = []

        def scan() -> None:
            client = as_("reader")
            i = 0
            scanning.set()
            while not stop.is_set() or not scans:  # one scan at least
                scans.append(page(client, random.randrange(n - tail), (1, 1000)[i % 2]))
                i += 1

        scanner = threading.Thread(target=scan)
        scanner.start()
        try:
            scanning.wait(60)
            busy = load_times(reads)
        finally:
            stop.set()
            scanner.join()
        p99 = int(len(busy) * 0.99)
        out.update(quiet_p50_ms=quiet[len(quiet) // 2] * 1e3, quiet_p99_ms=quiet[p99] * 1e3,
                   busy_p50_ms=busy[len(busy) // 2] * 1e3, busy_p99_ms=busy[p99] * 1e3,
                   scans=len(scans), scan_p50_ms=statistics.median(scans) * 1e3)
    finally:
        server.stop()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    ap.add_argument("--hidden-only", action="store_true", help="only (d)")
    args = ap.parse_args(argv)
    rounds, per_round, deep, warm = ((1, 20, 2_000, 1) if args.smoke else
                                     (3, 100, 20_000, 100) if args.quick
                                     else (9, 300, 1_000_000, 100))
    # (d): events, rounds, loadTables, warm-ups; (c): commits; (b): pages
    hidden_n, hidden_rounds, reads, hidden_warm, hooks, pages = (
        (2_000, 1, 20, 1, 2, 3) if args.smoke else (100_000, 20, 300, 10, 20, 50) if args.quick
        else (100_000, 60, 1000, 10, 100, 50))
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-events-bench-"))

    hidden = hidden_feed(tmp, hidden_n, hidden_rounds, reads, hidden_warm)
    print(f"a page of 100 from {hidden_n:,} events (1 % visible to the reader): reader "
          f"{hidden['hidden_ms']:.2f} ms, admin {hidden['visible_ms']:.2f} ms")
    print(f"admin's loadTable: alone p50 {hidden['quiet_p50_ms']:.2f} / p99 "
          f"{hidden['quiet_p99_ms']:.2f} ms; beside reader's pages (p50 "
          f"{hidden['scan_p50_ms']:.1f} ms, {hidden['scans']:.0f} served) p50 "
          f"{hidden['busy_p50_ms']:.2f} / p99 {hidden['busy_p99_ms']:.2f} ms")
    if args.hidden_only:
        print(f"events_page_hidden_vs_visible: {hidden['hidden_ms'] / hidden['visible_ms']:.2f}")
        print(f"loop_block_ms_during_hidden_scan: {hidden['busy_p99_ms']:.1f}")
        return

    lags = webhook_lags(tmp, hooks)
    print(f"webhook delivery after the commit's answer: p50 {statistics.median(lags) * 1e3:.0f}"
          f" ms, p90 {sorted(lags)[int(len(lags) * 0.9)] * 1e3:.0f} ms")

    store = Store(f"sqlite:///{tmp / 'commits.db'}")
    store.commit("main", [Put(NS, Namespace())], CommitMeta("namespace"))
    plain = without_events(store)
    with_rates, without_rates = [], []
    n = 0
    commit_rate(store, store.writer, warm, n)  # warm
    n += warm
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
    shallow = page_time(feed, 1_000, pages)
    deeper = page_time(feed, deep - 1_000, pages)
    feed.close()
    print(f"a page of 100 events after 10^3: {shallow * 1e3:.2f} ms, after {deep:,}: "
          f"{deeper * 1e3:.2f} ms")
    print()
    print(f"events_commit_overhead: {overhead:.3f}")
    print(f"events_page_deep_vs_shallow: {deeper / shallow:.2f}")
    print(f"webhook_lag_p50_ms: {statistics.median(lags) * 1e3:.0f}")
    print(f"events_page_hidden_vs_visible: {hidden['hidden_ms'] / hidden['visible_ms']:.2f}")
    print(f"loop_block_ms_during_hidden_scan: {hidden['busy_p99_ms']:.1f}")


if __name__ == "__main__":
    main()
