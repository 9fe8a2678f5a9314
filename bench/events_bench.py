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
(c) ``webhook_lag_p50_ms``: not measured yet (webhooks are the next step).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.commits import CommitMeta, Put
from core.content import IcebergTable, Namespace
from core.keys import ContentKey
from store import Store
from store.writes import BranchWriter

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds, per_round, deep = (3, 100, 20_000) if args.quick else (9, 300, 1_000_000)
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-events-bench-"))

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
    print("webhook_lag_p50_ms: n/a")


if __name__ == "__main__":
    main()
