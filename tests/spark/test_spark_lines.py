"""Issue 46, acceptance 1, on the Spark line that runs it: the 3.5 suite runs
this module on its worker's Spark, and the Spark 4.1 group
(tests/spark/test_spark41.py) runs it again on pyspark 4.1.

Plain PySpark with the jars ``sapwood spark-setup`` prints and docs/spark.md's
settings branches, writes a table and a view on the branch, merges it, reads
the view as of an instant before a replacement, and lists both versions of
the view; the demo runs on the line. What is the same for both lines (the
constraints files) is checked here too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx
import pytest

from spark.lines import LINES, current, pyspark_version
from tests.server import Server
from tests.spark.conftest import rows
from tests.spark.test_spark_first_day import _documented_settings, _plain

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
V1 = "SELECT region, sum(amount) AS revenue FROM orders GROUP BY region"
V2 = "SELECT region, count(*) AS orders, sum(amount) AS revenue FROM orders GROUP BY region"


def one(spark: SparkSession, sql: str) -> tuple:
    found = [tuple(r) for r in spark.sql(sql).collect()]
    assert len(found) == 1, found
    return found[0]


def _printed_settings() -> dict[str, str]:
    """``sapwood spark-setup`` as a user runs it, with this interpreter (its
    pyspark, its line): the settings it prints for a plain Spark."""
    done = subprocess.run([sys.executable, "-m", "cli", "spark-setup"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    line = current()
    assert (f"pyspark {pyspark_version()}: the {line.describe()} line, with Iceberg 1.12.0's "
            f"iceberg-spark-runtime-{line.name}_{line.scala}\n") in done.stdout, done.stdout
    return dict(re.findall(r"^  (spark\.[\w.]+)=(\S+)$", done.stdout, re.M))


def test_plain_pyspark_branches_merges_and_audits_a_view(spark_jvm: SparkSession,
                                                         server: Server, http: httpx.Client):
    printed = _printed_settings()
    line = current()
    # The worker's Spark runs with exactly what spark-setup prints: this line's
    # Iceberg runtime, the AWS bundle and the extension's module for the line.
    conf = spark_jvm.sparkContext.getConf()
    assert conf.get("spark.jars") == printed["spark.jars"]
    assert conf.get("spark.sql.extensions") == printed["spark.sql.extensions"]
    jars = [os.path.basename(p) for p in printed["spark.jars"].split(",")]
    assert jars[0] == f"iceberg-spark-runtime-{line.name}_{line.scala}-1.12.0.jar", jars
    assert jars[2].startswith(f"sapwood-spark-sql-{line.name}_{line.scala}-"), jars
    # A session with nothing but docs/spark.md's plain-Spark settings (catalog sw).
    documented = next(v for k, v in _documented_settings().items()
                      if k.startswith("docs/spark.md"))
    s = _plain(spark_jvm, documented, server.base)

    assert one(s, "CREATE BRANCH etl IN sw FROM main")[:2] == ("BRANCH", "etl")
    assert one(s, "USE REFERENCE etl IN sw")[:2] == ("BRANCH", "etl")
    s.sql("CREATE NAMESPACE sw.shop")
    s.sql("CREATE TABLE sw.shop.orders (region STRING, amount BIGINT) USING iceberg")
    s.sql("INSERT INTO sw.shop.orders VALUES ('north', 10), ('north', 5), ('south', 7)")
    s.sql("USE sw.shop")
    s.sql(f"CREATE VIEW revenue AS {V1}")
    assert http.get("/iceberg/main/v1/namespaces/shop/views/revenue").status_code == 404
    assert http.get("/iceberg/etl/v1/namespaces/shop/views/revenue").status_code == 200

    target, merged = one(s, "MERGE BRANCH etl INTO main IN sw")
    assert target == "main"
    assert http.get("/api/v2/trees/main").json()["reference"]["hash"] == merged
    assert one(s, "USE REFERENCE main IN sw") == ("BRANCH", "main", merged)
    assert rows(s, "SELECT * FROM revenue") == [("north", 15), ("south", 7)]

    time.sleep(0.05)
    before = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.05)
    s.sql(f"CREATE OR REPLACE VIEW revenue AS {V2}")
    assert rows(s, "SELECT * FROM revenue") == [("north", 2, 15), ("south", 1, 7)]
    one(s, f"USE REFERENCE main AT TIMESTAMP '{before}' IN sw")
    try:
        assert rows(s, "SELECT * FROM sw.shop.revenue") == [("north", 15), ("south", 7)]
    finally:
        one(s, "USE REFERENCE main IN sw")

    history = s.sql("SHOW VIEW HISTORY shop.revenue IN sw").collect()
    assert [(h.version_id, h.sql, h.author) for h in history] == [
        (2, {"spark": V2}, "etl-job"), (1, {"spark": V1}, "etl-job")]
    assert history[1].current_until == history[0].current_from
    assert history[0].current_until is None


def test_the_demo_runs_on_this_line(spark_jvm: SparkSession, tmp_path):
    """``sapwood demo``'s pipeline on the worker's Spark (its JVM shared, so
    the line's group starts no second one); tests/spark/test_demo.py checks
    its story. On 3.5, where tests/run.sh ran the README's ``sapwood demo``
    in a fresh venv (SAPWOOD_DEMO_RUN), test_demo.py checks that run instead."""
    from tests.spark.test_demo import check_demo, demo_in_process

    if current().name == "3.5" and os.environ.get("SAPWOOD_DEMO_RUN"):
        pytest.skip("the 3.5 line's demo is tests/run.sh's fresh-venv run (test_demo.py)")

    text, data = demo_in_process(spark_jvm, tmp_path / "demo")
    assert f"starting Spark {current().name} with catalogs main and etl" in text, text
    check_demo(text, data)


def _pins(name: str) -> dict[str, str]:
    with open(os.path.join(ROOT, name)) as f:
        return {line.split("==")[0].lower(): line.strip() for line in f
                if "==" in line and not line.startswith("#")}


def test_each_lines_constraints_differ_only_in_pyspark():
    """constraints-spark41.txt is constraints.txt with pyspark 4.1.x: every
    other pin is the one the suite is tested with."""
    files = {line.name: _pins(line.constraints) for line in LINES}
    assert files["3.5"]["pyspark"].startswith("pyspark==3.5.")
    assert files["4.1"]["pyspark"].startswith("pyspark==4.1.")
    assert {k: v for k, v in files["3.5"].items() if k != "pyspark"} == {
        k: v for k, v in files["4.1"].items() if k != "pyspark"}


@pytest.mark.parametrize("line", LINES, ids=lambda line: line.name)
def test_each_lines_pyspark_is_in_the_spark_extras_range(line):
    import tomllib

    from packaging.requirements import Requirement

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["spark"]
    pyspark = next(Requirement(r) for r in extra if r.startswith("pyspark"))
    pinned = _pins(line.constraints)["pyspark"].split("==")[1]
    assert pyspark.specifier.contains(pinned)
    # The lines Sapwood refuses are outside the range too.
    for refused in ("3.4.4", "4.0.5", "4.2.1", "4.3.0"):
        assert not pyspark.specifier.contains(refused), refused
