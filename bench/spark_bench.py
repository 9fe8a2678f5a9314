"""Spark view reads: through Sapwood's REST catalog ÷ through Iceberg's own
``InMemoryCatalog``, same data, same Spark session, measured side by side,
on each Spark line (3.5 and 4.1).

    python bench/spark_bench.py            # full run (about two minutes a line)
    python bench/spark_bench.py --quick    # 10 rounds
    python bench/spark_bench.py --smoke    # 100 rows, one round (the suite runs it)
    python bench/spark_bench.py --lines 4.1

A line is measured by a Python whose pyspark is of that line: this one for
its own line, and for the other, ``SAPWOOD_SPARK_PYTHON_<35|41>`` or else the
test suite's venv for it (``python -m tests.spark.spark41_env`` builds the
4.1 one), which runs this script for that line alone; a line without one is
said and left out. Every figure's name ends with its line
(``…_spark35``, ``…_spark41``).

Both catalogs get the same table (written by the same DataFrame) and the same
view; both run with Spark's table cache off, as Sapwood's branch catalogs do,
so every query resolves the view and its table through its catalog. Note the
baseline's advantage beyond the catalog: ``InMemoryCatalog`` always keeps its
metadata and data files in JVM memory (``InMemoryFileIO``; it ignores
``io-impl``), while Sapwood's tables are files in a local warehouse. A round
runs the query once on each side, in alternating order; the figure is the
median over rounds. Prints ``spark_view_read_vs_inmemory: <ratio>``.

Then the cost of Sapwood's Spark SQL extension to statements it does not own:
the same query over the Sapwood view in that session (whose parser is
Sapwood's in front of Iceberg's) and in a second session of the same JVM
made with Iceberg's extension alone (the same catalogs, warehouse and
server), alternating, median over rounds. Ends with
``sql_ext_parse_overhead_<line>: <ratio>`` (with ÷ without; the goal is ≤ 1.05).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spark import catalog_conf, session  # noqa: E402
from spark.lines import LINES, SparkLine, current  # noqa: E402
from spark.session import EXTENSIONS  # noqa: E402
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


def bench_session(uri: str, app_name: str, conf: Mapping[str, str],
                  jvm: Any = None) -> tuple[Any, dict[str, str]]:
    """A session whose default catalog ``sapwood`` is ``main`` of the server
    at ``uri``, with ``conf``, and the catalog settings it was given. Its own
    local Spark (``spark.session``), or, given ``jvm`` (a running
    SparkSession: the test suite's), a new session of that JVM with the
    settings set on it, which the caller must not stop."""
    settings = {**catalog_conf("sapwood", uri, "main"), "spark.sql.defaultCatalog": "sapwood",
                **conf}
    if jvm is None:
        return session(uri, ref="main", catalog="sapwood", app_name=app_name,
                       conf=conf), settings
    spark = jvm.newSession()
    for k, v in settings.items():
        spark.conf.set(k, v)
    # Active and default, as spark.session's is: Spark reads some settings
    # (the current catalog) from the active session's.
    sessions = spark._jvm.org.apache.spark.sql.SparkSession
    sessions.setActiveSession(spark._jsparkSession)
    sessions.setDefaultSession(spark._jsparkSession)
    return spark, settings


def without_sapwood_extension(spark, settings: Mapping[str, str]):  # type: ignore[no-untyped-def]
    """A session of ``spark``'s JVM whose parser is Iceberg's alone. A session
    takes its extensions from the context's ``spark.sql.extensions`` when it
    is made (``newSession`` copies its parent's), so the setting is narrowed
    for the one constructor call; the catalogs come from the context, or, for
    a session given them at run time, from ``settings``."""
    from pyspark.sql import SparkSession

    context = spark.sparkContext._jsc.sc()
    conf = context.conf()
    both = conf.get("spark.sql.extensions")
    conf.set("spark.sql.extensions", EXTENSIONS)
    # Spark 4's SparkSession is abstract: its implementation is the classic one.
    sql = spark._jvm.org.apache.spark.sql
    made = sql.SparkSession if current().name == "3.5" else sql.classic.SparkSession
    try:
        bare = made(context, spark._jvm.java.util.HashMap())
    finally:
        conf.set("spark.sql.extensions", both)
    parsers = [s.sessionState().sqlParser().getClass().getName()
               for s in (spark._jsparkSession, bare)]
    assert parsers[0] == "dev.sapwood.spark.SapwoodSqlParser", parsers
    assert "Sapwood" not in parsers[1], parsers
    out = SparkSession(spark.sparkContext, jsparkSession=bare)
    for k, v in settings.items():
        out.conf.set(k, v)
    return out


def side_by_side(runs: dict, rounds: int,  # type: ignore[type-arg]
                 warm: int | None = None) -> dict[str, list[float]]:
    """Each ``(session, query)`` of ``runs`` once per round, the two sides
    alternating which goes first, after a warm-up of both."""
    for _ in range(max(5, rounds // 10) if warm is None else warm):  # JIT and caches warm
        for spark, query in runs.values():
            timed(spark, query)
    names = list(runs)
    times: dict[str, list[float]] = {n: [] for n in names}
    for i in range(rounds):
        for n in (names if i % 2 == 0 else names[::-1]):
            times[n].append(timed(*runs[n]))
    return times


def report(times: dict[str, list[float]], labels: dict[str, str]) -> dict[str, float]:
    med = {c: statistics.median(t) for c, t in times.items()}
    for c, label in labels.items():
        t = sorted(times[c])
        print(f"{label:24} median {med[c] * 1000:7.2f} ms   "
              f"p10 {t[len(t) // 10] * 1000:7.2f} ms   p90 {t[len(t) * 9 // 10] * 1000:7.2f} ms")
    return med


def main(argv: list[str] | None = None, jvm: Any = None) -> None:
    """``jvm``: a running SparkSession to take a session from instead of
    starting Spark (the test suite's; bench_session): only its line is
    measured then."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="100 rows, one round")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--lines", default=",".join(line.name for line in LINES),
                        help="the Spark lines to measure (default: all)")
    args = parser.parse_args(argv)
    here = current()
    wanted = [line for line in LINES if line.name in args.lines.split(",")]
    if jvm is not None:
        wanted = [here]
    for line in wanted:
        print(f"== {line.describe()}")
        if line == here:
            measure(args, line, jvm)
        else:
            elsewhere(line, argv or sys.argv[1:])


def elsewhere(line: SparkLine, argv: list[str]) -> None:
    """This script for ``line`` alone, by a Python whose pyspark is of that line."""
    setting = f"SAPWOOD_SPARK_PYTHON_{line.name.replace('.', '')}"
    python = os.environ.get(setting)
    if not python:
        try:
            from tests.spark.spark41_env import venv_dir

            built = venv_dir() / "bin" / "python"
            python = str(built) if line.name == "4.1" and built.exists() else None
        except ImportError:
            python = None
    if not python:
        print(f"{line.tag}: left out, no Python with pyspark {line.name} (set {setting}, or "
              "build the suite's: python -m tests.spark.spark41_env)")
        return
    others = [a for i, a in enumerate(argv) if a != "--lines" and not a.startswith("--lines=")
              and (i == 0 or argv[i - 1] != "--lines")]
    done = subprocess.run([python, str(Path(__file__).resolve()), *others, "--lines", line.name],
                          capture_output=True, text=True, check=False)
    print(done.stdout.split("\n", 1)[1] if done.stdout.startswith("== ") else done.stdout,
          end="")
    if done.returncode != 0:
        raise SystemExit(f"bench/spark_bench.py on {line.describe()} ({python}) exited "
                         f"{done.returncode}:\n{done.stderr[-3000:]}")


def measure(args: argparse.Namespace, line: SparkLine, jvm: Any) -> None:
    """Both figures on this interpreter's line."""
    rows = args.rows or (100 if args.smoke else 10_000)
    rounds = args.rounds or (1 if args.smoke else 10 if args.quick else 200)
    warm = 1 if args.smoke else None

    with tempfile.TemporaryDirectory(prefix="sapwood-spark-bench-") as tmp:
        base = Path(tmp)
        srv = Server(f"sqlite:///{base / 'sapwood.db'}", base).start()
        try:
            spark, settings = bench_session(
                srv.base, "spark-bench",
                {"spark.sql.catalog.mem": "org.apache.iceberg.spark.SparkCatalog",
                 "spark.sql.catalog.mem.catalog-impl":
                     "org.apache.iceberg.inmemory.InMemoryCatalog",
                 "spark.sql.catalog.mem.warehouse": (base / "mem").as_uri(),
                 "spark.sql.catalog.mem.cache-enabled": "false"}, jvm)
            try:
                for catalog in ("sapwood", "mem"):
                    populate(spark, catalog, rows)
                queries = {c: f"SELECT * FROM {c}.bench.daily ORDER BY day"
                           for c in ("sapwood", "mem")}
                first = {c: spark.sql(q).collect() for c, q in queries.items()}
                assert first["sapwood"] == first["mem"], "the two catalogs disagree"
                times = side_by_side({c: (spark, q) for c, q in queries.items()}, rounds, warm)
                bare = without_sapwood_extension(spark, settings)
                assert bare.sql(queries["sapwood"]).collect() == first["sapwood"]
                ext = side_by_side({"with": (spark, queries["sapwood"]),
                                    "without": (bare, queries["sapwood"])}, rounds, warm)
            finally:
                if jvm is None:
                    spark.stop()
        finally:
            srv.stop()
        errors = srv.server_errors()
        assert not errors, f"the server answered 5xx: {errors}"

    print(f"rows: {rows}, view result rows: {len(first['mem'])}, rounds: {rounds}")
    med = report(times, {"sapwood": "Sapwood (Iceberg REST)", "mem": "InMemoryCatalog"})
    print(f"spark_view_read_vs_inmemory_{line.tag}: {med['sapwood'] / med['mem']:.3f}")
    med = report(ext, {"with": "with the SQL extension", "without": "Iceberg's parser alone"})
    print(f"sql_ext_parse_overhead_{line.tag}: {med['with'] / med['without']:.3f}")


if __name__ == "__main__":
    main()
