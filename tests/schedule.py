"""How tests/run.sh's workers share the suite: whole test files (module
fixtures, a server each, stay with their tests), except that the files
driving the worker's Spark run as two groups, each on one worker.

Every worker that runs a Spark file starts a JVM of its own (tests/spark/
conftest.py: ``spark_jvm``), about 10 s of CPU before its first query and
more while its compiler warms up again. Shared out file by file, the Spark
files reached all three workers; in two groups they start two JVMs, and the
third worker runs only Python. A Spark file missing from ``SPARK_GROUPS``
still runs, as a unit of its own.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling

# Two groups of about equal time (seconds of one worker, measured on 2 cores
# with three workers): 180 and 179, then about 20 more in b for the Spark
# benchmarks' smoke runs (test_spark_bench_smoke.py) and about 20 in a for the
# Spark lines' acceptance (test_spark_lines.py). The Spark 4.1 group
# (test_spark41.py: a pytest of its own, on pyspark 4.1, with its own JVM) is a
# unit of its own, handed out first (tests/conftest.py: LONGEST_FIRST).
SPARK_GROUPS = {
    **dict.fromkeys(("test_spark_mviews.py", "test_spark_sql_extension.py",
                     "test_spark_s3.py", "test_docs_story.py", "test_spark_sql.py",
                     "test_spark_first_day.py", "test_spark_lines.py"), "a"),
    **dict.fromkeys(("test_spark_auth.py", "test_spark_view_analysis.py",
                     "test_spark_v3.py", "test_spark_content_merge.py",
                     "test_time_travel.py", "test_spark_maintenance.py",
                     "test_spark_bench_smoke.py", "test_merge_requests.py"), "b"),
}


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or its Spark group."""
    path = nodeid.split("::", 1)[0]
    folder, _, name = path.rpartition("/")
    group = SPARK_GROUPS.get(name) if folder == "tests/spark" else None
    return f"tests/spark/[group {group}]" if group else path


class FilesAndSparkGroups(LoadFileScheduling):
    """``--dist loadfile`` with the Spark groups as units. Units are handed
    out in collection order (tests/conftest.py puts the longest first); a
    group starts where its first file would have, and its files keep their
    collection order inside it, each file's tests together."""

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)
