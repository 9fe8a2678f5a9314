"""A ``MERGE BRANCH`` statement makes at most two HTTP requests (issue 45;
up to four before: the default branch, each side's head, the merge): the
merge itself, and the default branch's name when there is no INTO. The
catalog's URI points at a loopback proxy in front of the real server
(tests/proxy.py), which counts what Sapwood's SQL extension and the Python
helpers (spark.merge) send to the versioning API."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

import spark as sw
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.proxy import LossyProxy
from tests.server import Server
from tests.spark.test_spark_sql_extension import head, plain

server = server_fixture(BACKENDS, prefix="merge-requests")


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    with http_client(base_url=server.base, timeout=30) as client:
        yield client


@pytest.fixture
def proxy(server: Server) -> Iterator[LossyProxy]:
    with LossyProxy(f"127.0.0.1:{server.port}", rule=lambda m, p: False) as p:
        yield p


def _versioning(proxy: LossyProxy, since: int) -> list[tuple[str, str]]:
    return [(m, p.split("?")[0]) for m, p, _ in proxy.received[since:]
            if p.startswith("/api/v2/")]


def _branch_with_namespace(spark, name: str) -> None:
    spark.sql(f"CREATE BRANCH IF NOT EXISTS {name} IN sw FROM main")
    spark.sql(f"USE REFERENCE {name} IN sw")
    spark.sql(f"CREATE NAMESPACE sw.{name}_ns")
    spark.sql("USE REFERENCE main IN sw")


def test_merge_branch_sends_the_merge_alone(spark_jvm, server: Server,
                                            http: httpx.Client,
                                            proxy: LossyProxy) -> None:
    spark = plain(spark_jvm, proxy.base)
    _branch_with_namespace(spark, "req_into")
    n = len(proxy.received)
    dry = [tuple(r) for r in spark.sql("MERGE BRANCH req_into INTO main IN sw DRY RUN")
           .collect()]
    assert dry == [("req_into_ns", "APPLIED", [])]
    assert _versioning(proxy, n) == [("POST", "/api/v2/trees/main/history/merge")]
    n = len(proxy.received)
    merged = tuple(spark.sql("MERGE BRANCH req_into INTO main IN sw").collect()[0])
    assert merged == ("main", head(http, "main"))
    assert _versioning(proxy, n) == [("POST", "/api/v2/trees/main/history/merge")]


def test_without_into_it_asks_the_default_branch_once(spark_jvm, server: Server,
                                                      http: httpx.Client,
                                                      proxy: LossyProxy) -> None:
    spark = plain(spark_jvm, proxy.base)
    _branch_with_namespace(spark, "req_default")
    at = head(http, "req_default")
    spark.sql("USE REFERENCE req_default IN sw")
    spark.sql("CREATE NAMESPACE sw.req_default_later")
    spark.sql("USE REFERENCE main IN sw")
    n = len(proxy.received)
    merged = tuple(spark.sql(f"MERGE BRANCH req_default AT COMMIT {at} IN sw").collect()[0])
    assert merged == ("main", head(http, "main"))
    assert _versioning(proxy, n) == [("GET", "/api/v2/config"),
                                     ("POST", "/api/v2/trees/main/history/merge")]
    # AT COMMIT: the commit named, resolved by the server, not the branch's head.
    r = http.get("/api/v2/trees/main/history", params={"maxRecords": 1})
    meta = r.json()["logEntries"][0]["commitMeta"]
    assert meta["parentCommitHashes"][1] == at
    assert meta["message"] == "merge req_default into main"


def test_the_merge_helper_sends_one_request(spark_jvm, server: Server,
                                            http: httpx.Client,
                                            proxy: LossyProxy) -> None:
    spark = plain(spark_jvm, server.base)
    _branch_with_namespace(spark, "req_helper")
    n = len(proxy.received)
    merged = sw.merge(proxy.base, "req_helper", into="main")
    assert merged["wasApplied"] and merged["resultantTargetHash"] == head(http, "main")
    assert _versioning(proxy, n) == [("POST", "/api/v2/trees/main/history/merge")]
