"""How close can a Sapwood commit get to the raw-SQL floor? Splits a commit's
cost into its SQL and its Python, all measured in one run (medians of
interleaved rounds, as in store_bench.py).

    python bench/commit_bound.py            # SQLite
    python bench/commit_bound.py --postgres # PostgreSQL too (a temp server)

Three loops on one database:
  floor      one INSERT of a 1 KB row + one conditional UPDATE (store_bench's floor)
  sql_only   exactly the statements a Sapwood commit runs (same SQL, a real
             commit row as the template), with no planning at all
  sapwood    Store.commit of a one-key update

Printed: each loop's µs per commit, ``sql_only_vs_raw`` (the best ratio any
planner could reach with this schema: the SQL alone),
``python_budget_us_for_half`` (what planning may cost for the ratio to be 0.5)
and the SQL alone timed after 200 µs of client CPU work or sleep before each
commit (the floor's statements run back to back; a commit's follow planning).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text

from bench.store_bench import Floor, Loaded
from core.commits import RefType


def measure(url: str, label: str, rounds: int, per_round: int) -> dict[str, float]:
    ld = Loaded(url, 1_000)
    rnd = random.Random(5)
    for j in range(200):  # a realistic head: delta, depth, value sizes
        ld.update("main", rnd.randrange(1_000), f"warm{j}")
    store = ld.store
    db = store.db
    ld.store.create_reference("bound")
    with db.read() as conn:
        template = list(conn.execute(text(
            "SELECT hash, parent, merge_parents, generation, created_us, author, committer, "
            "message, properties, operations, root, root_loc, depth, pack FROM commits "
            "WHERE hash = :h"), {"h": store.get_reference("main").hash}).one())
    floor = Floor(store)
    bound_head = store.get_reference("bound").hash
    writer = store.writer

    def sql_round(gap: str = "none") -> float:
        """The statements alone; with a gap, each commit is timed after 200 µs
        of client CPU work or sleep (what planning does to the server side)."""
        nonlocal bound_head
        spent = 0.0
        for _ in range(per_round):
            if gap == "cpu":
                end = time.perf_counter() + 200e-6
                while time.perf_counter() < end:
                    pass
            elif gap == "sleep":
                time.sleep(200e-6)
            t = time.perf_counter()
            new = os.urandom(32).hex()
            row = (new, bound_head, *template[2:])
            journal = (bound_head, new, time.time_ns() // 1000, None, "commit")
            if writer._sql_one is not None:  # PostgreSQL: the one-statement path
                db.run_statement(writer._sql_one, (new, "bound", bound_head, *row, *journal))
            else:
                with db.raw_write() as c:
                    c.execute(writer._sql_commit, row)
                    c.execute(writer._sql_cas, (new, "bound", bound_head))
                    c.execute(writer._sql_reflog, ("bound", RefType.BRANCH.value, *journal))
            bound_head = new
            spent += time.perf_counter() - t
        return spent / per_round

    def sapwood_round(r: int) -> float:
        picks = [rnd.randrange(1_000) for _ in range(per_round)]
        t = time.perf_counter()
        for j, i in enumerate(picks):
            ld.update("main", i, f"b{r}-{j}")
        return (time.perf_counter() - t) / per_round

    f, s, w, cpu, slept = [], [], [], [], []
    for r in range(rounds):
        f.append(floor.round(per_round))
        s.append(sql_round())
        w.append(sapwood_round(r))
        cpu.append(sql_round("cpu"))
        slept.append(sql_round("sleep"))
    floor.close()
    store.close()
    fl, sq, sw = (statistics.median(x) * 1e6 for x in (f, s, w))
    return {f"floor_us_{label}": fl, f"sql_only_us_{label}": sq, f"sapwood_us_{label}": sw,
            f"python_us_{label}": sw - sq,
            f"sql_only_after_200us_cpu_us_{label}": statistics.median(cpu) * 1e6,
            f"sql_only_after_200us_sleep_us_{label}": statistics.median(slept) * 1e6,
            f"sql_only_vs_raw_{label}": statistics.median(a / b for a, b in zip(f, s, strict=True)),
            f"commit_vs_raw_{label}": statistics.median(a / b for a, b in zip(f, w, strict=True)),
            f"python_budget_us_for_half_{label}": 2 * fl - sq}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="sapwood-bound-") as d:
        results |= measure(f"sqlite:///{Path(d) / 'bound.db'}", "sqlite", args.rounds, 300)
    if args.postgres:
        from tests.pg import TempPostgres

        pg = TempPostgres()
        pg.start()
        try:
            results |= measure(pg.create_database("bound"), "postgres", args.rounds, 300)
        finally:
            pg.stop()
    width = max(len(k) for k in results)
    for k, v in results.items():
        print(f"{k:<{width}}  {v:10.3f}")


if __name__ == "__main__":
    main()
