"""The Spark 4.1 group (issue 46): the Spark tests each line must pass run
again on pyspark 4.1, in one pytest process of the 4.1 venv
(tests/spark/spark41_env.py), so one Spark 4.1 JVM (its worker Spark fixture)
serves them all; only dbt's run and the SQL extension's test of it start
their own, as they do on 3.5.

What runs there: acceptance 1 and the demo on the line
(test_spark_lines.py), reads at an instant (test_time_travel.py), every
statement of the SQL extension, its parse errors, credentials and a dbt
project that branches, builds and merges (test_spark_sql_extension.py:
dbt-spark 1.11 takes pyspark < 5), format v3 (test_spark_v3.py, but for
its maintenance test, NOT_LINE_SPECIFIC), and the
Spark benchmark's small run, whose figures end with ``_spark41``. On
SQLite alone: what a line changes is Spark's side, and the 3.5 suite runs
the same tests on PostgreSQL too (a PostgreSQL of the group's own would cost
it seconds of CPU). The
group's own test report (JUnit XML) is read back: every file ran tests,
none failed, and with SAPWOOD_REQUIRE_SPARK=1 none skipped (the inner run
inherits the setting, so a 4.1 line that cannot be set up fails there)."""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from spark.errors import SetupError
from tests.spark.conftest import REQUIRE_SPARK

ROOT = Path(__file__).resolve().parents[2]
GROUP = ("tests/spark/test_spark_lines.py", "tests/spark/test_time_travel.py",
         "tests/spark/test_spark_sql_extension.py", "tests/spark/test_spark_v3.py",
         "tests/spark/test_spark_bench_smoke.py::test_spark_bench")
# Cases of the group's files that exercise Sapwood's side alone, which the 3.5
# run covers: the v3 maintenance test's Spark work (deletion vectors written
# and read) is in the group's other v3 tests; what it adds is gc, fsck,
# restore and revert on the server.
NOT_LINE_SPECIFIC = (
    "tests/spark/test_spark_v3.py::test_gc_fsck_restore_revert_keep_deletion_vectors",)


def test_the_spark_41_group(tmp_path: Path, record_property: pytest.RecordProperty):
    from tests.spark.spark41_env import python

    try:
        exe = python()
    except SetupError as e:
        if REQUIRE_SPARK:
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but the Spark 4.1 venv cannot be made: {e}")
        pytest.skip(f"no Spark 4.1 venv: {e}")
    report = tmp_path / "spark41.xml"
    # Not an xdist worker of this run: the group is one process.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    done = subprocess.run(
        [str(exe), "-m", "pytest", "-n0", "-q", "-p", "no:cacheprovider",
         "--junitxml", str(report), "--durations=10", "-k", "not postgres",
         *(f"--deselect={case}" for case in NOT_LINE_SPECIFIC), *GROUP],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    out = done.stdout + done.stderr
    record_property("spark41", out[-3000:])
    assert done.returncode == 0, f"the Spark 4.1 group failed:\n{out[-8000:]}"
    cases = ET.parse(report).getroot().iter("testcase")
    ran: dict[str, int] = {}
    skipped = []
    for case in cases:
        module = case.get("classname", "").replace(".", "/") + ".py"
        ran[module] = ran.get(module, 0) + 1
        if case.find("skipped") is not None:
            skipped.append(f"{case.get('classname')}::{case.get('name')}")
    assert {g.split("::")[0] for g in GROUP} <= set(ran), (ran, out[-3000:])
    if REQUIRE_SPARK:
        assert skipped == [], f"SAPWOOD_REQUIRE_SPARK=1 but skipped on Spark 4.1: {skipped}"
