"""Spark view reads: through Sapwood's REST catalog ÷ through Iceberg's own
``InMemoryCatalog``, same data, same Spark session, measured side by side.

    python bench/spark_bench.py            # full run (about two minutes)
    python bench/spark_bench.py --quick    # a smoke test

Both catalogs get the same table (written by the same DataFrame) and the same
view; both run with Spark's table cache off, as Sapwood's branch catalogs do,
so every query resolves the view and its table through its catalog. Note the
baseline's advantage beyond the catalog: ``InMemoryCatalog`` always keeps its
metadata and data files in JVM memory (``InMemoryFileIO``; it ignores
``io-impl``), while Sapwood's tables are files in a local warehouse. A round
runs the query once on each side, in alternating order; the figure is the
median over rounds. Ends with ``spark_view_read_vs_inmemory: <ratio>``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spark import session  # noqa: E402
from tests.server import Server  # noqa: E402

VIEW_SQL = ("SELECT day, count(*) AS orders, round(sum(amount), 2) AS revenue "
            "FROM orders WHERE amount > 10 GROUP BY day")


def populate(spark, catalog: str, rows: int) -> None:  # type: ignore[no-untyped-def]
    spark.sql(f"CREATE NAMESPACE {catalog}.bench")
    spark.sql(f"CREATE TABLE {catalog}.bench.orders (id BIGINT, amount DOUBLE, day DATE) "
              "USING iceberg")
    spark.range(rows).selectExpr(
        "id", "(id * 13) % 200 * 0.5 AS amount",
        "date_add(DATE'2026-11-01', CAST(id % 30 AS INT)) AS day",
    ).coalesce(1).writeTo(f"{catalog}.bench.orders").append()
    spark.sql(f"USE {catalog}.bench")
    spark.sql(f"CREATE VIEW daily AS {VIEW_SQL}")


def timed(spark, query: str) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    spark.sql(query).collect()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int)
    args = parser.parse_args()
    rounds = args.rounds or (10 if args.quick else 200)

    with tempfile.TemporaryDirectory(prefix="sapwood-spark-bench-") as tmp:
        base = Path(tmp)
        srv = Server(f"sqlite:///{base / 'sapwood.db'}", base).start()
        try:
            spark = session(srv.base, ref="main", catalog="sapwood", app_name="spark-bench",
                            conf={"spark.sql.catalog.mem": "org.apache.iceberg.spark.SparkCatalog",
                                  "spark.sql.catalog.mem.catalog-impl":
                                      "org.apache.iceberg.inmemory.InMemoryCatalog",
                                  "spark.sql.catalog.mem.warehouse": (base / "mem").as_uri(),
                                  "spark.sql.catalog.mem.cache-enabled": "false"})
            try:
                for catalog in ("sapwood", "mem"):
                    populate(spark, catalog, args.rows)
                queries = {c: f"SELECT * FROM {c}.bench.daily ORDER BY day"
                           for c in ("sapwood", "mem")}
                first = {c: spark.sql(q).collect() for c, q in queries.items()}
                assert first["sapwood"] == first["mem"], "the two catalogs disagree"
                for _ in range(max(5, rounds // 10)):  # JIT and caches warm on both sides
                    for q in queries.values():
                        timed(spark, q)
                times: dict[str, list[float]] = {"sapwood": [], "mem": []}
                for i in range(rounds):
                    order = ("sapwood", "mem") if i % 2 == 0 else ("mem", "sapwood")
                    for c in order:
                        times[c].append(timed(spark, queries[c]))
            finally:
                spark.stop()
        finally:
            srv.stop()

    med = {c: statistics.median(t) for c, t in times.items()}
    print(f"rows: {args.rows}, view result rows: {len(first['mem'])}, rounds: {rounds}")
    for c, label in (("sapwood", "Sapwood (Iceberg REST)"), ("mem", "InMemoryCatalog")):
        t = sorted(times[c])
        print(f"{label:24} median {med[c] * 1000:7.2f} ms   "
              f"p10 {t[len(t) // 10] * 1000:7.2f} ms   p90 {t[len(t) * 9 // 10] * 1000:7.2f} ms")
    print(f"spark_view_read_vs_inmemory: {med['sapwood'] / med['mem']:.3f}")


if __name__ == "__main__":
    main()
