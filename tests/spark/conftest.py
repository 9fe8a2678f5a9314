"""Real Spark against a real ``sapwood serve``: one server and one Spark
session per test module, on the installed pyspark's line (3.5 in the suite;
4.1 in the Spark 4.1 group, tests/spark/test_spark41.py). Without Java,
pyspark, Maven or the jars these tests skip, or fail when
SAPWOOD_REQUIRE_SPARK=1."""

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


@pytest.fixture(scope="session")
def spark_jvm(spark_ready: None) -> Iterator[SparkSession]:
    """One Spark per test worker (its JVM and SparkContext, warmed once): a
    JVM's start and warm-up cost each module 5-10 s. Modules get sessions of
    their own from it (``module_session``)."""
    from pyspark.sql import SparkSession

    from spark.session import base_conf

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName("sapwood-tests")
    for k, v in base_conf().items():
        builder = builder.config(k, v)
    s = builder.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def module_session(jvm: SparkSession, uri: str, catalog: str = "sapwood", ref: str = "main",
                   credential: str | None = None) -> SparkSession:
    """A new session on the worker's Spark, as ``spark.session`` would make
    one: catalog ``catalog`` on ``ref`` of the server at ``uri``, the default
    catalog. Sessions share the JVM but not their settings or catalogs, so a
    module's catalogs (and a server of its own) are its alone."""
    from spark import catalog_conf

    s = jvm.newSession()
    for k, v in catalog_conf(catalog, uri, ref, credential=credential).items():
        s.conf.set(k, v)
    s.conf.set("spark.sql.defaultCatalog", catalog)
    # Active and default, as the session spark.session builds is: what
    # resolves a name given to spark.read...load() (Iceberg's source).
    sessions = s._jvm.org.apache.spark.sql.SparkSession  # type: ignore[attr-defined]
    sessions.setActiveSession(s._jsparkSession)
    sessions.setDefaultSession(s._jsparkSession)
    return s


@pytest.fixture(scope="module")
def spark(spark_jvm: SparkSession, server: Server) -> SparkSession:
    """The module's session: catalog ``sapwood`` on main (the default catalog)."""
    return module_session(spark_jvm, server.base)


def rows(spark: SparkSession, sql: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())
