"""tests/schedule.py: the Spark groups name files that exist, and each
group is one unit of work while every other file is its own."""

from __future__ import annotations

from pathlib import Path

from tests.schedule import SPARK_GROUPS, unit_of

SPARK = Path(__file__).parent / "spark"


def test_the_spark_groups_name_the_files_that_drive_the_workers_spark() -> None:
    for name in SPARK_GROUPS:
        assert (SPARK / name).is_file(), f"tests/schedule.py names a missing file: {name}"
    # A file that asks for the worker's Spark belongs to a group, or it
    # starts a third JVM wherever it lands.
    marks = ("spark_jvm", "spark: SparkSession", "(spark,")  # the fixture, or a test taking it
    users = {p.name for p in SPARK.glob("test_*.py") if any(m in p.read_text() for m in marks)}
    assert users <= set(SPARK_GROUPS), users - set(SPARK_GROUPS)
    assert set(SPARK_GROUPS.values()) == {"a", "b"}


def test_units() -> None:
    a = unit_of("tests/spark/test_spark_mviews.py::test_x[sqlite]")
    assert a == unit_of("tests/spark/test_spark_sql.py::test_y") == "tests/spark/[group a]"
    assert unit_of("tests/spark/test_spark_auth.py::test_z") == "tests/spark/[group b]"
    assert unit_of("tests/spark/test_setup.py::test_w") == "tests/spark/test_setup.py"
    assert unit_of("tests/api/test_auth.py::test_v[x::y]") == "tests/api/test_auth.py"
