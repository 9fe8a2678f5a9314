from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from store import Store
from tests.fixtures import database_url, started_postgres
from tests.pg import TempPostgres
from tests.s3 import LocalS3
from tests.server import Server


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    """Plain HTTP to the module's ``server`` (each test folder defines its own)."""
    with httpx.Client(base_url=server.base, timeout=30) as client:
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


@pytest.fixture(scope="session")
def s3() -> Iterator[LocalS3]:
    """A local S3-compatible server (moto), for warehouses on object storage."""
    local = LocalS3.start()
    yield local
    local.stop()


# The slowest test files, roughly in seconds on 2 cores (pytest --durations).
# Two workers take whole files in collection order as they free up; starting
# with the longest keeps one worker from finishing a long file alone at the
# end (a minute of the suite's wall time).
_SLOW_FILES = {
    "tests/api/test_events_kill.py": 180, "tests/spark/test_demo.py": 95,
    "tests/spark/test_spark_mviews.py": 80, "tests/spark/test_spark_view_analysis.py": 70,
    "tests/spark/test_spark_auth.py": 60, "tests/api/test_webhooks.py": 70,
    "tests/api/test_gc_warehouse.py": 55, "tests/api/test_content_merge_model.py": 60,
    "tests/api/test_cli_versioning.py": 55, "tests/api/test_schemathesis.py": 45,
    "tests/api/test_gc_inflight.py": 45, "tests/spark/test_spark_content_merge.py": 40,
    "tests/spark/test_spark_sql.py": 40, "tests/spark/test_time_travel.py": 30,
    "tests/api/test_idempotency.py": 35, "tests/api/test_replicas.py": 30,
    "tests/api/test_ui_browser.py": 30, "tests/store/test_fsck.py": 30,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def weight(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return -_SLOW_FILES.get(path, 0)
    items.sort(key=weight)  # stable: files keep their order otherwise
