"""How close can a Sapwood commit get to the raw-SQL floor? Splits a commit's
cost into its SQL and its Python, all measured in one run (medians of
interleaved rounds, as in store_bench.py).

    python bench/commit_bound.py            # SQLite
    python bench/commit_bound.py --postgres # PostgreSQL too (a temp server)
    python bench/commit_bound.py --smoke    # tiny sizes, one round (the suite runs it)

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.store_bench import Floor, Loaded, key


class _Recording:
    """A cursor that notes each statement and its parameters, then runs it."""

    def __init__(self, cur: Any, log: list[tuple[str, str, Any]]) -> None:
        self._cur, self._log = cur, log

    def execute(self, sql: str, params: Any = ()) -> Any:
        self._log.append(("one", sql, params))
        return self._cur.execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> Any:
        rows = list(rows)
        self._log.append(("many", sql, rows))
        return self._cur.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


def recorded_commit(ld: Loaded, branch: str, i: int) -> list[tuple[str, str, Any]]:
    """The statements (and parameters) one Sapwood commit of a one-key
    update on ``branch`` runs, noted while it runs: what ``sql_only``
    replays, so it stays the writer's own SQL whatever that becomes."""
    db = ld.store.db
    log: list[tuple[str, str, Any]] = []
    raw_write, run_statement = db.raw_write, db.run_statement

    @contextmanager
    def recording_write() -> Iterator[Any]:
        with raw_write() as cur:
            yield _Recording(cur, log)

    def recording_statement(sql: str, params: tuple[object, ...]) -> int:
        log.append(("statement", sql, params))
        return run_statement(sql, params)

    db.raw_write, db.run_statement = recording_write, recording_statement  # type: ignore[method-assign]
    before = ld.values[key(i)]
    try:
        ld.update(branch, i, "recorded")
    finally:
        db.raw_write, db.run_statement = raw_write, run_statement  # type: ignore[method-assign]
        ld.values[key(i)] = before  # main still holds it
    assert log, "the commit ran none of the statements it was expected to"
    return log


def _swapped(value: Any, old: dict[str, str]) -> Any:
    """``value`` with each hash of ``old`` (a key) replaced by its value,
    inside strings (an event's JSON) and lists (PostgreSQL's arrays)."""
    if isinstance(value, str):
        for a, b in old.items():
            value = value.replace(a, b)
        return value
    if isinstance(value, list | tuple):
        return type(value)(_swapped(v, old) for v in value)
    return value


def measure(url: str, label: str, rounds: int, per_round: int, keys: int = 1_000,
            warm: int = 200) -> dict[str, float]:
    ld = Loaded(url, keys)
    rnd = random.Random(5)
    for j in range(warm):  # a realistic head: delta, depth, value sizes
        ld.update("main", rnd.randrange(keys), f"warm{j}")
    store = ld.store
    db = store.db
    ld.store.create_reference("bound")
    parent = store.get_reference("bound").hash
    template = recorded_commit(ld, "bound", rnd.randrange(keys))
    made = store.get_reference("bound").hash
    floor = Floor(store)
    bound_head = made

    def sql_round(gap: str = "none") -> float:
        """The statements alone (the recorded commit's, with new hashes,
        each commit's parent the one before); with a gap, each commit is
        timed after 200 µs of client CPU work or sleep (what planning does
        to the server side)."""
        nonlocal bound_head
        chain = []
        for _ in range(per_round):
            new = os.urandom(32).hex()
            chain.append([(kind, sql, _swapped(params, {made: new, parent: bound_head}))
                          for kind, sql, params in template])
            bound_head = new
        spent = 0.0
        for statements in chain:
            if gap == "cpu":
                end = time.perf_counter() + 200e-6
                while time.perf_counter() < end:
                    pass
            elif gap == "sleep":
                time.sleep(200e-6)
            t = time.perf_counter()
            if statements[0][0] == "statement":  # PostgreSQL: the one-statement path
                moved = sum(db.run_statement(sql, params) for _, sql, params in statements)
            else:
                moved = 0
                with db.raw_write() as c:
                    for kind, sql, params in statements:
                        if kind == "many":
                            c.executemany(sql, params)
                        else:
                            c.execute(sql, params)
                            if sql == store.writer._sql_cas:
                                moved = c.rowcount
            spent += time.perf_counter() - t
            assert moved == 1, "the replayed commit did not move the branch"
        return spent / per_round

    def sapwood_round(r: int) -> float:
        picks = [rnd.randrange(keys) for _ in range(per_round)]
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--postgres-url", help="an empty PostgreSQL database to use instead of "
                    "starting a server (implies --postgres)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    args = ap.parse_args(argv)
    rounds = args.rounds or (1 if args.smoke else 7)
    sizes = {"per_round": 20, "keys": 100, "warm": 20} if args.smoke else {"per_round": 300}
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="sapwood-bound-") as d:
        results |= measure(f"sqlite:///{Path(d) / 'bound.db'}", "sqlite", rounds, **sizes)
    if args.postgres_url:
        results |= measure(args.postgres_url, "postgres", rounds, **sizes)
    elif args.postgres:
        from tests.pg import TempPostgres

        pg = TempPostgres()
        pg.start()
        try:
            results |= measure(pg.create_database("bound"), "postgres", rounds, **sizes)
        finally:
            pg.stop()
    width = max(len(k) for k in results)
    for k, v in results.items():
        print(f"{k:<{width}}  {v:10.3f}")


if __name__ == "__main__":
    main()
