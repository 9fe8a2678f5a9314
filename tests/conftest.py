from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from store import Store
from tests.fixtures import database_url, started_postgres
from tests.http import http_client
from tests.pg import TempPostgres
from tests.pyiceberg_signing import install as install_signing
from tests.s3 import LocalS3
from tests.server import Server
from tests.store.helpers import Clock

# Every Spark the suite starts (the workers' own, and those of the CLI, the
# docs' blocks and dbt, which it runs as processes) gets these JVM options
# through pyspark's PYSPARK_SUBMIT_ARGS, as Spark's defaultJavaOptions. The
# tests run many short queries over little data: C2's compiles of code that
# runs a few times cost more than they save, and a parallel collector's
# threads compete with the other worker. C1 alone and the serial collector
# took 40 % less CPU for the same Spark files (82 -> 48 s of the machine's
# CPU for test_spark_v3 + test_spark_sql), and less time. What users get
# (spark.session, sapwood demo) keeps the JVM's defaults.
TEST_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("PYSPARK_SUBMIT_ARGS", shlex.join(
    ["--conf", f"spark.driver.defaultJavaOptions={TEST_JAVA_OPTIONS}", "pyspark-shell"]))
# PyIceberg's remote signing, safe across the test process's threads
# (apache/iceberg-python#3896: tests/pyiceberg_signing.py).
install_signing()


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    """Plain HTTP to the module's ``server`` (each test folder defines its own)."""
    with http_client(base_url=server.base, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def postgres() -> Iterator[TempPostgres]:
    pg = started_postgres()
    yield pg
    pg.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url(request, request.param, tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store(store_url)
    yield s
    s.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed(store_url: str, clock: Clock) -> Iterator[tuple[Store, Clock]]:
    """A store on ``clock`` (retention's tests move time by hand)."""
    s = Store(store_url, clock=clock)
    yield s, clock
    s.close()


@pytest.fixture(scope="session")
def s3() -> Iterator[LocalS3]:
    """A local S3-compatible server (moto), for warehouses on object storage."""
    local = LocalS3.start()
    yield local
    local.stop()


# The modules that take longest (seconds of one worker, measured on 2 cores),
# longest first. tests/run.sh hands whole modules to its workers in
# collection order (--dist loadfile --no-loadscope-reorder): with the long
# ones first, the run ends on short modules on every worker instead of one
# worker finishing a long module alone. Only the order depends on this list;
# a module missing from it runs after those named, the larger first.
LONGEST_FIRST = (
    # The Spark 4.1 group: one test of 100-140 s (a pytest of its own on pyspark 4.1).
    "spark/test_spark41.py",
    "api/test_gc_inflight.py", "api/test_schemathesis.py", "api/test_gc_warehouse.py",
    "nessie/test_nessie_import.py", "spark/test_setup.py", "api/test_webhooks.py",
    "trino/test_trino_views.py",
    "test_bench_smoke.py", "nessie/test_nessie_spark.py",
    "spark/test_spark_mviews.py",
    "spark/test_spark_auth.py", "api/test_hidden_as_missing.py",
    "spark/test_spark_sql_extension.py", "store/test_fsck.py", "store/test_fsck_memory.py",
    "spark/test_docs_story.py", "spark/test_spark_view_analysis.py",
    "api/test_cli_versioning.py", "store/test_gc.py",
    "api/test_idempotency.py", "api/test_rck.py", "api/test_auth.py", "store/test_concurrency.py",
    "api/test_ui_browser.py", "api/test_events_kill.py", "api/test_ui_csrf.py",
    "store/test_change_index_model.py", "api/test_auth_load.py", "spark/test_spark_v3.py",
    "api/test_replicas.py", "api/test_content_merge_model.py",
)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own (plain loadfile)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """tests/run.sh's --dist loadfile, with the Spark files in two groups
    (tests/schedule.py says why)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.schedule import FilesAndSparkGroups

    return FilesAndSparkGroups(config, log)


@pytest.hookimpl(trylast=True)  # after pytest's own grouping by fixture parameters
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    sizes: dict[str, int] = {}
    for item in items:
        sizes[item.nodeid.split("::")[0]] = sizes.get(item.nodeid.split("::")[0], 0) + 1

    def order(item: pytest.Item) -> tuple[int, int]:
        module = item.nodeid.split("::")[0]
        return rank.get(module.removeprefix("tests/"), len(rank)), -sizes[module]

    items.sort(key=order)  # stable: a module's tests keep their order


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The REST Compatibility Kit's counts, which tests/api/test_rck.py
    records as the ``rck`` property (reports carry it from xdist's workers)."""
    from tests.rck.kit import summary

    found = [json.loads(v) for reports in terminalreporter.stats.values() for r in reports
             if getattr(r, "when", None) == "call"
             for k, v in getattr(r, "user_properties", ()) if k == "rck"]
    if found:
        terminalreporter.write_line(summary(found))
