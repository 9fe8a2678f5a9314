"""The two Spark benchmarks run (issue 44, defect 10; acceptance 3):
bench/spark_bench.py and bench/mv_bench.py in their small mode
(``--smoke``), each printing every figure its full run promises
(tests/bench_smoke.py: FIGURES), with no 5xx from its server.

They run on this worker's Spark (``spark_jvm``): each bench's ``main``
takes a running Spark and makes its session there
(bench.spark_bench.bench_session) instead of starting a JVM of its own,
which would cost 20-30 s of CPU before its first query. Skipped without
Spark, failed instead under SAPWOOD_REQUIRE_SPARK=1 (conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.bench_smoke import FIGURES, figures, run_main

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_spark_bench(spark_jvm: SparkSession, tmp_path: Path):
    """On the worker's line: its figures (the Spark 4.1 group runs this test
    on 4.1, tests/spark/test_spark41.py)."""
    from spark.lines import current

    line = current()
    out = run_main("spark_bench", ["--smoke", "--lines", line.name], tmp_path, jvm=spark_jvm)
    figures(out, [f for f in FIGURES["spark_bench"] if f.endswith(f"_{line.tag}")])


def test_mv_bench(spark_jvm: SparkSession, tmp_path: Path):
    out = run_main("mv_bench", ["--smoke"], tmp_path, jvm=spark_jvm)
    figures(out, FIGURES["mv_bench"])
