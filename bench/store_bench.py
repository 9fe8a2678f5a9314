"""Store benchmark: every figure is a ratio against a baseline measured in the
same run, so a noisy shared machine does not move the verdict. Medians.

    python bench/store_bench.py            # full run (< 5 min here)
    python bench/store_bench.py --quick    # smaller sizes
    python bench/store_bench.py --smoke    # tiny sizes, one round (the suite runs it)

(a) key lookup at a commit with 100,000 commits of history / with 100 commits
    (both over the same 1,000 live keys; node cache cleared before each lookup)
(b) diff and merge of a branch with 10 changed keys, main holding 100,000 keys
    / 1,000 keys, as a running server sees them (caches as the process left
    them); the same with caches cleared first is printed as *_cold
(c) commits/s on one branch (SQLite) and the ratio to a raw-SQL floor: one
    INSERT of a 1 KB commit-sized row + one conditional UPDATE per commit,
    same database, same driver connection pool
(d) the same on PostgreSQL (a server this script starts in a temp folder)
    Also printed: the commit ratio against the same two statements issued
    through SQLAlchemy text() (commit_vs_sqlalchemy_text_*), for reference.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.commits import CommitMeta, Put
from core.content import IcebergTable, Namespace
from core.keys import ContentKey
from store import Store

NS = ContentKey.of("bench")


def key(i: int) -> ContentKey:
    return ContentKey.of("bench", f"t{i:06d}")


class Loaded:
    """A store with ``n`` keys under one namespace, tracking current values."""

    def __init__(self, url: str, n: int) -> None:
        self.store = Store(url)
        self.store.commit("main", [Put(NS, Namespace())], CommitMeta("namespace"))
        self.values: dict[ContentKey, IcebergTable] = {}
        for start in range(0, n, 10_000):
            ops = [Put(key(i), IcebergTable(metadata_location=f"s3://w/t{i}/m0.json"))
                   for i in range(start, min(n, start + 10_000))]
            res = self.store.commit("main", ops, CommitMeta("load"))
            for op in ops:
                self.values[op.key] = op.content.with_id(res.assigned_ids[op.key])  # type: ignore[assignment]
        self.n = n

    def update(self, branch: str, i: int, tag: str) -> str:
        k = key(i)
        cur = self.values[k]
        new = cur.model_copy(update={"metadata_location": f"s3://w/t{i}/{tag}.json"})
        res = self.store.commit(branch, [Put(k, new, expected=cur)], CommitMeta(tag))
        self.values[k] = new
        return res.hash


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def progress(msg: str) -> None:
    print(f"  … {msg}", file=sys.stderr, flush=True)


def bench_lookup(tmp: Path, deep: int, shallow: int, keys: int, rounds: int) -> dict:
    stores = {}
    for name, history in (("shallow", shallow), ("deep", deep)):
        progress(f"lookup: building {history:,} commits of history over {keys:,} keys")
        ld = Loaded(f"sqlite:///{tmp / f'lookup_{name}.db'}", keys)
        rnd = random.Random(1)
        hashes = [ld.update("main", rnd.randrange(keys), f"h{j}") for j in range(history)]
        stores[name] = (ld, hashes)
    times: dict[str, list[float]] = {"shallow": [], "deep": []}
    rnd = random.Random(2)
    for _ in range(rounds):
        for name in ("shallow", "deep"):
            ld, hashes = stores[name]
            h, k = rnd.choice(hashes), key(rnd.randrange(keys))
            ld.store.reader.clear_caches()
            times[name].append(timed(lambda s=ld.store, h=h, k=k: s.content(f"@{h}", k)))
    med = {n: statistics.median(t) for n, t in times.items()}
    for ld, _ in stores.values():
        ld.store.close()
    return {"lookup_shallow_ms": med["shallow"] * 1e3, "lookup_deep_ms": med["deep"] * 1e3,
            "lookup_deep_vs_shallow": med["deep"] / med["shallow"]}


def bench_diff_merge(tmp: Path, large: int, small: int, rounds: int) -> dict:
    stores = {}
    for name, n in (("small", small), ("large", large)):
        progress(f"diff/merge: loading {n:,} keys")
        stores[name] = Loaded(f"sqlite:///{tmp / f'dm_{name}.db'}", n)
    times: dict[str, list[float]] = {}
    rnd = random.Random(3)
    # All steady-state rounds first: a cold round empties the caches.
    for cold in (False, True):
        for r in range(rounds):
            for name, ld in stores.items():
                branch = f"b{r}{'c' if cold else 'w'}"
                ld.store.create_reference(branch)
                for i in rnd.sample(range(ld.n), 10):
                    ld.update(branch, i, f"{branch}-{i}")
                suffix = "_cold" if cold else ""
                for op, fn in (("diff", lambda s=ld.store, b=branch: s.diff("main", b)),
                               ("merge", lambda s=ld.store, b=branch: s.merge(b, "main"))):
                    if cold:
                        ld.store.reader.clear_caches()
                    times.setdefault(f"{op}_{name}{suffix}", []).append(timed(fn))
    med = {k: statistics.median(v) for k, v in times.items()}
    for ld in stores.values():
        ld.store.close()
    out = {f"{k}_ms": v * 1e3 for k, v in med.items()}
    for op in ("diff", "merge"):
        for suffix in ("", "_cold"):
            out[f"{op}_large_vs_small{suffix}"] = (med[f"{op}_large{suffix}"]
                                                    / med[f"{op}_small{suffix}"])
    return out


class Floor:
    """The raw-SQL floor: one INSERT of a 1 KB commit-sized row and one
    conditional UPDATE per commit, on a DBAPI connection of the store's own
    write engine (same database, same connection settings)."""

    def __init__(self, store: Store) -> None:
        db = store.db
        self.raw = db.write_engine.raw_connection()
        self.cur = self.raw.cursor()
        blob = "bytea" if db.dialect == "postgresql" else "BLOB"
        ident = "BIGSERIAL" if db.dialect == "postgresql" else "INTEGER"
        self.cur.execute(f"CREATE TABLE bench_floor (id {ident} PRIMARY KEY, "
                         f"hash VARCHAR(64), data {blob})")
        self.cur.execute("CREATE TABLE bench_floor_ref (name VARCHAR(255) PRIMARY KEY, "
                         "head BIGINT)")
        self.cur.execute("INSERT INTO bench_floor_ref VALUES ('main', 0)")
        self.raw.commit()
        p = db.param
        self.insert = f"INSERT INTO bench_floor (hash, data) VALUES ({p}, {p})"
        self.update = f"UPDATE bench_floor_ref SET head = {p} WHERE name = 'main' AND head = {p}"
        self.begin = "BEGIN IMMEDIATE" if db.dialect == "sqlite" else ""
        self.payload = os.urandom(1024)
        self.head = 0

    def round(self, n: int) -> float:
        """Seconds per commit over ``n`` commits."""
        cur = self.cur
        t = time.perf_counter()
        for _ in range(n):
            if self.begin:
                cur.execute(self.begin)
            cur.execute(self.insert, (os.urandom(32).hex(), self.payload))
            cur.execute(self.update, (self.head + 1, self.head))
            assert cur.rowcount == 1
            self.raw.commit()
            self.head += 1
        return (time.perf_counter() - t) / n

    def close(self) -> None:
        self.cur.close()
        self.raw.close()


def bench_commits(url: str, label: str, keys: int, per_round: int, rounds: int) -> dict:
    progress(f"commits on {label}: {rounds} rounds of {per_round} commits, Sapwood vs floor")
    ld = Loaded(url, keys)
    floor_sql = Floor(ld.store)

    from sqlalchemy import text

    sa_insert = text("INSERT INTO bench_floor (hash, data) VALUES (:h, :d)")
    sa_update = text("UPDATE bench_floor_ref SET head = :new WHERE name = 'main' AND head = :old")

    def sa_floor_round() -> float:
        # The same two statements through SQLAlchemy (text(), one transaction
        # each, the store's own write engine): "raw SQL" as this stack writes it.
        t = time.perf_counter()
        for _ in range(per_round):
            head = floor_sql.head
            with ld.store.db.write() as conn:
                conn.execute(sa_insert, {"h": os.urandom(32).hex(), "d": floor_sql.payload})
                assert conn.execute(sa_update, {"new": head + 1, "old": head}).rowcount == 1
            floor_sql.head += 1
        return per_round / (time.perf_counter() - t)

    rnd = random.Random(4)

    def sapwood_round(r: int) -> float:
        picks = [rnd.randrange(keys) for _ in range(per_round)]
        t = time.perf_counter()
        for j, i in enumerate(picks):
            ld.update("main", i, f"c{r}-{j}")
        return per_round / (time.perf_counter() - t)

    sap, floor, ratios, sa_ratios = [], [], [], []
    for r in range(rounds):
        s, f, fsa = sapwood_round(r), 1 / floor_sql.round(per_round), sa_floor_round()
        sap.append(s)
        floor.append(f)
        ratios.append(s / f)
        sa_ratios.append(s / fsa)
    floor_sql.close()
    ld.store.close()
    return {f"commits_per_s_{label}": statistics.median(sap),
            f"floor_per_s_{label}": statistics.median(floor),
            f"commit_vs_raw_{label}": statistics.median(ratios),
            f"commit_vs_sqlalchemy_text_{label}": statistics.median(sa_ratios)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    ap.add_argument("--postgres-url", help="an empty PostgreSQL database to use instead of "
                    "starting a server")
    args = ap.parse_args(argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    # Per part: (lookup: deep, shallow, keys, rounds), (diff/merge: large,
    # small, rounds), (commits: keys, per round, rounds).
    lookup, diff_merge, commits = {
        "smoke": ((50, 10, 100, 3), (500, 100, 1), (100, 20, 1)),
        "quick": ((2_000, 100, 1_000, 50), (10_000, 1_000, 3), (1_000, 100, 3)),
        "full": ((100_000, 100, 1_000, 300), (100_000, 1_000, 15), (1_000, 300, 7)),
    }[mode]
    started = time.perf_counter()
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="sapwood-bench-") as d:
        tmp = Path(d)
        results |= bench_lookup(tmp, *lookup)
        results |= bench_diff_merge(tmp, *diff_merge)
        results |= bench_commits(f"sqlite:///{tmp / 'commits.db'}", "sqlite", *commits)
        if args.postgres_url:
            results |= bench_commits(args.postgres_url, "postgres", *commits)
        else:
            results |= _on_own_postgres(commits)
    print(f"\nstore benchmark ({mode}), "
          f"{time.perf_counter() - started:.0f} s; medians\n")
    width = max(len(k) for k in results)
    for k, v in results.items():
        print(f"  {k:<{width}}  {v:10.3f}")
    print()
    for name in ("lookup_deep_vs_shallow", "diff_large_vs_small", "merge_large_vs_small",
                 "commits_per_s_sqlite", "commit_vs_raw_sqlite", "commits_per_s_postgres",
                 "commit_vs_raw_postgres"):
        value = results.get(name)
        print(f"{name}: {'n/a' if value is None else f'{value:.3f}'}")


def _on_own_postgres(commits: tuple[int, int, int]) -> dict:
    """(d) on a PostgreSQL server this starts in a temp folder; nothing when
    it cannot."""
    try:
        from tests.pg import TempPostgres

        pg = TempPostgres()
        pg.start()
    except (ImportError, RuntimeError) as e:
        print(f"PostgreSQL part skipped: {e}", file=sys.stderr)
        return {}
    try:
        return bench_commits(pg.create_database("bench"), "postgres", *commits)
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
