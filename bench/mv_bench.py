"""Materialized views from Spark: reading a fresh view's stored rows ÷ computing
the view, and an incremental refresh ÷ a full one.

    python bench/mv_bench.py            # full run: 1,000,000 rows (about two minutes)
    python bench/mv_bench.py --quick    # 100,000 rows, 3 rounds
    python bench/mv_bench.py --smoke    # 1,000 rows, one round (the suite runs it)

One real ``sapwood serve`` (SQLite) and one local Spark session (``local[2]``).
The base table ``bench.facts`` gets ``--rows`` rows from ``spark.range``
(``k = id % 1000``, ``v = id % 97``); ``bench.dims`` maps each of the 1,000
keys to one of 10 groups.

(a) ``mv_read_vs_compute``: a materialized view joining the facts with the
    dimension table and aggregating them into 1,000 groups (sum, count, min,
    max), refreshed so it is fresh. A round runs, in alternating order,
    ``SELECT * FROM sapwood.bench.mv_join`` (the server answers loadTable with
    the stored rows) and the view's own SQL over the base tables; both
    collected to the driver. Checked once beforehand: the read's executed plan
    scans the view's storage and not the base table, and both give the same
    rows. Ratio of the medians (after warm-up rounds). Both sides pay Spark's
    fixed cost of a query (planning, one job, collecting), which the read of
    1,000 stored rows cannot go below.
(b) ``mv_incremental_vs_full``: two materialized views with the same
    append-only filter SQL over the facts (acceptance 6's kind of view), both
    fresh. A round appends 1 % of ``--rows`` to the facts, then refreshes one
    view with ``mode="auto"`` (asserted incremental) and the other with
    ``mode="full"``, in alternating order. Ratio of the medians; afterwards
    both views must hold the same rows (and the same as the SQL computed).
    The same again for a re-aggregable GROUP BY (sum, count, min, max):
    ``mv_incremental_vs_full_aggregate``; its incremental refresh merges a
    few thousand rows with the stored groups in one Spark job, whose fixed
    cost is about that of aggregating the whole 1,000,000 rows here.
Prints the medians in ms, then ends with ``mv_read_vs_compute: <ratio>`` and
``mv_incremental_vs_full: <ratio>``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.spark_bench import bench_session  # noqa: E402
from spark.mviews import create_materialized_view, freshness, refresh  # noqa: E402
from tests.server import Server  # noqa: E402

JOIN_SQL = ("SELECT d.grp, f.k, sum(f.v) AS total, count(*) AS n, min(f.v) AS lo, "
            "max(f.v) AS hi FROM bench.facts f JOIN bench.dims d ON f.k = d.k "
            "GROUP BY d.grp, f.k")
AGG_SQL = ("SELECT k, sum(v) AS total, count(*) AS n, min(v) AS lo, max(v) AS hi "
           "FROM bench.facts GROUP BY k")
# The append-only filter view of acceptance 6 (about half the rows pass).
FILTER_SQL = "SELECT id, k, v FROM bench.facts WHERE v < 48"


def append_facts(spark, start: int, count: int) -> None:  # type: ignore[no-untyped-def]
    spark.range(start, start + count).selectExpr(
        "id", "id % 1000 AS k", "id % 97 AS v").writeTo("sapwood.bench.facts").append()


def populate(spark, rows: int) -> None:  # type: ignore[no-untyped-def]
    spark.sql("CREATE NAMESPACE sapwood.bench")
    spark.sql("CREATE TABLE sapwood.bench.facts (id BIGINT, k BIGINT, v BIGINT) USING iceberg")
    spark.sql("CREATE TABLE sapwood.bench.dims (k BIGINT, grp STRING) USING iceberg")
    append_facts(spark, 0, rows)
    spark.range(1000).selectExpr("id AS k", "concat('g', id % 10) AS grp").coalesce(1) \
        .writeTo("sapwood.bench.dims").append()


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def rows_of(spark, sql: str) -> list:  # type: ignore[no-untyped-def]
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def read_vs_compute(spark, uri: str, rounds: int,  # type: ignore[no-untyped-def]
                    warm: int = 3) -> tuple[float, float]:
    create_materialized_view(spark, uri, "bench.mv_join", JOIN_SQL)
    assert refresh(spark, uri, "bench.mv_join")["kind"] == "full"
    assert freshness(uri, "bench.mv_join")["status"] == "fresh"
    read = "SELECT * FROM sapwood.bench.mv_join"
    plan = spark.sql(read)._jdf.queryExecution().executedPlan().toString()
    assert "mv_join" in plan and "facts" not in plan, f"the read did not scan the storage: {plan}"
    stored, computed = rows_of(spark, read), rows_of(spark, JOIN_SQL)
    assert stored == computed and len(stored) == 1000, "stored and computed rows differ"
    queries = {"read": read, "compute": JOIN_SQL}
    times: dict[str, list[float]] = {"read": [], "compute": []}
    for i in range(warm + rounds):
        for side in (("read", "compute") if i % 2 == 0 else ("compute", "read")):
            took = timed(lambda q=queries[side]: spark.sql(q).collect())
            if i >= warm:  # warm-up rounds
                times[side].append(took)
    return statistics.median(times["read"]), statistics.median(times["compute"])


def incremental_vs_full(spark, uri: str, rows: int, rounds: int, sql: str,  # type: ignore[no-untyped-def]
                        name: str, warm: int = 1) -> tuple[float, float]:
    views = {"incremental": f"bench.{name}_inc", "full": f"bench.{name}_full"}
    for key in views.values():
        create_materialized_view(spark, uri, key, sql)
        assert refresh(spark, uri, key)["kind"] == "full"
    # ``warm`` unmeasured rounds first: they warm the incremental code path too.
    delta, next_id = max(1, rows // 100), rows
    times: dict[str, list[float]] = {"incremental": [], "full": []}
    for i in range(warm + rounds):
        append_facts(spark, next_id, delta)
        next_id += delta
        for mode in (("incremental", "full") if i % 2 == 0 else ("full", "incremental")):
            plan: dict = {}

            def run(mode: str = mode, plan: dict = plan) -> None:
                plan.update(refresh(spark, uri, views[mode],
                                    mode="auto" if mode == "incremental" else "full"))

            took = timed(run)
            assert plan["kind"] == mode, f"{mode} refresh ran as {plan['kind']}: {plan['reason']}"
            if i >= warm:
                times[mode].append(took)
    digest = "SELECT count(*), sum(hash(*)) FROM ({})"
    inc, full = (rows_of(spark, digest.format(f"SELECT * FROM sapwood.{views[m]}"))
                 for m in views)
    assert inc == full == rows_of(spark, digest.format(sql)), "the views disagree"
    assert all(freshness(uri, k)["status"] == "fresh" for k in views.values())
    return statistics.median(times["incremental"]), statistics.median(times["full"])


def main(argv: list[str] | None = None, jvm: Any = None) -> None:
    """``jvm``: a running SparkSession to take a session from instead of
    starting Spark (the test suite's; bench.spark_bench.bench_session)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="1,000 rows, one round")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--reads", type=int, help="measured reads of each side")
    parser.add_argument("--rounds", type=int, help="measured refresh rounds")
    args = parser.parse_args(argv)
    rows = args.rows or (1_000 if args.smoke else 100_000 if args.quick else 1_000_000)
    reads = args.reads or (1 if args.smoke else 3 if args.quick else 15)
    rounds = args.rounds or (1 if args.smoke else 3 if args.quick else 5)
    # Warm-up rounds of the reads and of the refreshes.
    warm_reads, warm_refreshes = (0, 0) if args.smoke else (3, 1)

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sapwood-mv-bench-") as tmp:
        base = Path(tmp)
        srv = Server(f"sqlite:///{base / 'sapwood.db'}", base).start()
        try:
            spark, _ = bench_session(srv.base, "mv-bench", {}, jvm)
            try:
                populate(spark, rows)
                read_s, compute_s = read_vs_compute(spark, srv.base, reads, warm_reads)
                inc_s, full_s = incremental_vs_full(spark, srv.base, rows, rounds,
                                                    FILTER_SQL, "mv_filter", warm_refreshes)
                agg_inc_s, agg_full_s = incremental_vs_full(spark, srv.base, rows, rounds,
                                                            AGG_SQL, "mv_agg", warm_refreshes)
            finally:
                if jvm is None:
                    spark.stop()
        finally:
            srv.stop()
        errors = srv.server_errors()
        assert not errors, f"the server answered 5xx: {errors}"

    print(f"rows: {rows:,}, reads: {reads} each, refresh rounds: {rounds} "
          f"(+{max(1, rows // 100):,} rows each), took {time.perf_counter() - started:.0f} s")
    print(f"mv_read_ms: {read_s * 1e3:.1f}")
    print(f"mv_compute_ms: {compute_s * 1e3:.1f}")
    print(f"mv_refresh_incremental_ms: {inc_s * 1e3:.1f}")
    print(f"mv_refresh_full_ms: {full_s * 1e3:.1f}")
    print(f"mv_refresh_incremental_aggregate_ms: {agg_inc_s * 1e3:.1f}")
    print(f"mv_refresh_full_aggregate_ms: {agg_full_s * 1e3:.1f}")
    print(f"mv_incremental_vs_full_aggregate: {agg_inc_s / agg_full_s:.3f}")
    print(f"mv_read_vs_compute: {read_s / compute_s:.3f}")
    print(f"mv_incremental_vs_full: {inc_s / full_s:.3f}")


if __name__ == "__main__":
    main()
