"""Real Spark 3.5 against a real ``sapwood serve``: one server and one Spark
session per test module. Without Java, pyspark or the jars these tests skip,
or fail when SAPWOOD_REQUIRE_SPARK=1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.fixtures import server_fixture
from tests.server import Server

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REQUIRE_SPARK = os.environ.get("SAPWOOD_REQUIRE_SPARK") == "1"


@pytest.fixture(scope="session")
def spark_ready() -> None:
    """Java, pyspark and the Iceberg jars (built into the user cache once)."""
    from spark.errors import SetupError
    from spark.jars import java, spark_jars

    try:
        java()
        spark_jars()
    except SetupError as e:
        if REQUIRE_SPARK:
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but Spark cannot run here: {e}")
        pytest.skip(f"Spark unavailable: {e}")


# Webhook receivers in these tests listen on loopback.
server = server_fixture(prefix="spark-server", env={"SAPWOOD_WEBHOOK_ALLOW_PRIVATE": "1"})


@pytest.fixture(scope="module")
def spark(spark_ready: None, server: Server) -> Iterator[SparkSession]:
    """The module's session: catalog ``sapwood`` on main (the default catalog)."""
    from spark import session

    s = session(server.base, ref="main", catalog="sapwood", app_name="sapwood-tests")
    yield s
    s.stop()


def rows(spark: SparkSession, sql: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())
