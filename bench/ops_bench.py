"""Operations benchmark: export and import, and garbage collection.

    python bench/ops_bench.py            # full run (a few minutes; needs PostgreSQL)
    python bench/ops_bench.py --quick    # smaller sizes
    python bench/ops_bench.py --smoke    # tiny sizes, one round (the suite runs it)

(a) A catalog of 10,000 commits on SQLite is exported and imported into a
    new PostgreSQL catalog (SQLite when PostgreSQL is not available); the
    two must hold the same references and commit hashes. Prints both times.
(b) gc throughput: a deleted branch of N commits swept (objects/s: commits
    and their packs), and N orphaned warehouse files removed (files/s).
(c) Mark cost per live object: gc's mark over a catalog with 10^4 and with
    10^5 live objects (index nodes and values), measured side by side in
    interleaved rounds; ratio of the median per-object times.
(d) Retention: gc (the store's, a dry run) over one catalog of 10^5 commits
    with a policy on its branch (keep the newest 1,000) against the same gc
    without it, interleaved; ratio of the medians.
Ends with ``export_s``, ``import_s``, ``gc_objects_per_s``, ``gc_files_per_s``,
``gc_mark_vs_live_objects`` and ``retention_gc_vs_plain_gc``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import text  # noqa: E402

from catalog.maintenance.gc import collect_files  # noqa: E402
from catalog.metadata.files import MetadataFiles  # noqa: E402
from core.commits import CommitMeta, Put  # noqa: E402
from core.content import IcebergTable, Namespace  # noqa: E402
from core.keys import ContentKey  # noqa: E402
from core.retention import Policy  # noqa: E402
from store import Store  # noqa: E402
from store import gc as gc_mod  # noqa: E402
from store.dump import export_rows, import_rows  # noqa: E402


def commits(store: Store, branch: str, n: int, keys: int = 50) -> None:
    """``n`` commits updating ``keys`` tables round-robin."""
    cur: dict[str, IcebergTable] = {}
    for i in range(n):
        k = ContentKey(["ns", f"{branch}{i % keys}"])
        old = cur.get(str(k))
        new = IcebergTable(id=old.id if old else None,
                           metadata_location=f"file:///bench/{branch}/{i}.json")
        store.commit(branch, [Put(k, new, expected=old)], CommitMeta(f"{branch} {i}"))
        cur[str(k)] = store.content(branch, k) if old is None else new  # type: ignore[assignment]


def bulk(store: Store, keys: int) -> None:
    batch: list[Put] = []
    for i in range(keys):
        batch.append(Put(ContentKey(["ns", f"k{i:06d}"]),
                         IcebergTable(metadata_location=f"file:///bench/k{i}.json")))
        if len(batch) == 5_000:
            store.commit("main", batch, CommitMeta("bulk"))
            batch = []
    if batch:
        store.commit("main", batch, CommitMeta("bulk"))


def export_import(tmp: Path, n: int, into: str | None = None) -> tuple[float, float, str]:
    """Export of ``n`` commits and their import into ``into`` (an empty
    PostgreSQL database), or one this starts (SQLite when it cannot)."""
    src = Store(f"sqlite:///{tmp / 'export.db'}")
    src.commit("main", [Put(ContentKey(["ns"]), Namespace())], CommitMeta("ns"))
    commits(src, "main", n)
    target, pg = (into, None) if into else _target(tmp)
    t = time.perf_counter()
    dump = list(export_rows(src.db))
    export_s = time.perf_counter() - t
    dst = Store(target)
    t = time.perf_counter()
    import_rows(dst.db, dump)
    import_s = time.perf_counter() - t
    with src.db.read() as a, dst.db.read() as b:
        q = text("SELECT hash FROM commits ORDER BY hash")
        assert a.execute(q).scalars().all() == b.execute(q).scalars().all()
    assert {r.name: r.hash for r in src.list_references().items} == \
        {r.name: r.hash for r in dst.list_references().items}
    src.close()
    dst.close()
    if pg is not None:
        pg.stop()
    return export_s, import_s, "PostgreSQL" if target.startswith("postgresql") else "SQLite"


def _target(tmp: Path):  # type: ignore[no-untyped-def]
    try:
        from tests.pg import TempPostgres

        pg = TempPostgres()
        pg.start()
        return str(pg.create_database("ops_import")), pg
    except Exception:  # no PostgreSQL here: measure SQLite → SQLite
        return f"sqlite:///{tmp / 'import.db'}", None


def gc_throughput(tmp: Path, n: int) -> tuple[float, float]:
    s = Store(f"sqlite:///{tmp / 'gc.db'}")
    s.commit("main", [Put(ContentKey(["ns"]), Namespace())], CommitMeta("ns"))
    s.create_reference("tmp")
    commits(s, "tmp", n)
    s.delete_reference("tmp", s.get_reference("tmp").hash)
    report = gc_mod.collect(s, grace_s=0)
    assert report.removed_commits == n, report
    s.close()
    objects_per_s = report.removed_commits / report.sweep_s
    wh = tmp / "warehouse"
    (wh / "orphans").mkdir(parents=True)
    for i in range(n):
        (wh / "orphans" / f"{i}.parquet").write_bytes(b"x" * 100)
    past = time.time() - 3600
    for p in (wh / "orphans").iterdir():
        os.utime(p, (past, past))
    files = collect_files(MetadataFiles(), wh.as_uri(), [], grace_s=60, dry_run=False,
                          mark_started_s=time.time(), window_s=60)
    assert files.removed_files == n, files
    return objects_per_s, files.removed_files / files.seconds


def mark_per_object(tmp: Path, small: int, large: int, rounds: int) -> tuple[float, float]:
    """Median mark seconds per live object over a catalog of ``small`` keys
    and one of ``large``, measured side by side (rounds interleaved, so both
    see the same machine); a small sample repeats its mark large/small times,
    so each sample of either is about as long (a 10 ms sample alone is mostly
    noise)."""
    stores = {}
    for keys in (small, large):
        s = Store(f"sqlite:///{tmp / f'mark{keys}.db'}")
        s.commit("main", [Put(ContentKey(["ns"]), Namespace())], CommitMeta("ns"))
        bulk(s, keys)
        gc_mod.collect(s, grace_s=0, dry_run=True)  # warm: the first run reads from disk
        stores[keys] = s
    times: dict[int, list[float]] = {small: [], large: []}
    for _ in range(rounds):
        for keys, s in stores.items():
            seconds, objects = 0.0, 0
            for _ in range(max(1, large // small) if keys == small else 1):
                r = gc_mod.collect(s, grace_s=0, dry_run=True)
                seconds += r.mark_s
                objects += r.live_objects
            times[keys].append(seconds / objects)
    for s in stores.values():
        s.close()
    return statistics.median(times[small]), statistics.median(times[large])


def retention_vs_plain(tmp: Path, n: int, rounds: int,
                       keep: int = 1_000) -> tuple[float, float, int]:
    """Median seconds of gc with the policy (main keeps its newest ``keep``
    commits) and without, and the commits it found expired."""
    s = Store(f"sqlite:///{tmp / 'retention.db'}")
    s.commit("main", [Put(ContentKey(["ns"]), Namespace())], CommitMeta("ns"))
    commits(s, "main", n)
    with_policy, plain, expired = [], [], 0
    for _ in range(rounds):
        s.retention.replace([Policy("main", keep_commits=keep)])
        t = time.perf_counter()
        r = gc_mod.collect(s, grace_s=0, dry_run=True)
        with_policy.append(time.perf_counter() - t)
        expired = r.expired.get("main", 0)
        s.retention.replace([])
        t = time.perf_counter()
        gc_mod.collect(s, grace_s=0, dry_run=True)
        plain.append(time.perf_counter() - t)
    s.close()
    return statistics.median(with_policy), statistics.median(plain), expired


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    ap.add_argument("--postgres-url", help="an empty PostgreSQL database to import into "
                    "(instead of one this starts)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="sapwood-ops-bench-"))
    n_export, n_gc, small, large, rounds, n_ret, keep = (
        (50, 20, 100, 1_000, 1, 100, 10) if args.smoke
        else (1_000, 500, 1_000, 10_000, 3, 10_000, 1_000) if args.quick
        else (10_000, 2_000, 10_000, 100_000, 5, 100_000, 1_000))
    export_s, import_s, into = export_import(tmp, n_export, args.postgres_url)
    print(f"(a) {n_export:,} commits: export {export_s:.2f} s, import into {into} "
          f"{import_s:.2f} s; same hashes and references")
    objects, files = gc_throughput(tmp, n_gc)
    print(f"(b) gc swept {n_gc:,} dead commits at {objects:,.0f}/s and {n_gc:,} orphaned "
          f"files at {files:,.0f}/s")
    a, b = mark_per_object(tmp, small, large, rounds)
    print(f"(c) mark: {a * 1e6:.2f} µs per live object with ~{small:,} keys, "
          f"{b * 1e6:.2f} µs with ~{large:,} (median of {rounds})")
    ret, plain, expired = retention_vs_plain(tmp, n_ret, rounds, keep)
    print(f"(d) gc over {n_ret:,} commits: {ret:.2f} s with a policy (expired {expired:,} "
          f"commits), {plain:.2f} s without (median of {rounds})")
    print()
    print(f"export_s: {export_s:.2f}")
    print(f"import_s: {import_s:.2f}")
    print(f"gc_objects_per_s: {objects:.0f}")
    print(f"gc_files_per_s: {files:.0f}")
    print(f"gc_mark_vs_live_objects: {b / a:.2f}")
    print(f"retention_gc_vs_plain_gc: {ret / plain:.2f}")


if __name__ == "__main__":
    main()
