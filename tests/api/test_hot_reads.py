"""The hot reads (api/hot_reads.py) answer exactly what the routes answer:
the same status, body and ETag as the same read sent through FastAPI (a
query string sends it there), errors included; and they
are counted under their route in /metrics."""

from __future__ import annotations

import httpx
import pytest

from tests.api import spark_bodies as sb

NS = "/iceberg/v1/namespaces/hot"


@pytest.fixture(scope="module")
def objects(http: httpx.Client) -> None:
    assert http.post("/iceberg/v1/namespaces", json={"namespace": ["hot"],
                                                     "properties": {"o": "1"}}).status_code == 200
    assert http.post(f"{NS}/tables", json=sb.create_table("t")).status_code == 200
    assert http.post(f"{NS}/views", json=sb.create_view("v", "SELECT 1")).status_code == 200


@pytest.mark.parametrize("path", [f"{NS}/tables/t", f"{NS}/views/v", NS,
                                  "/iceberg/main/v1/namespaces/hot/tables/t",
                                  "/iceberg/v1/main/namespaces/hot/views/v",
                                  f"{NS}/tables/missing", f"{NS}/views/missing",
                                  "/iceberg/v1/namespaces/nowhere",
                                  "/iceberg/no%20such%20ref/v1/namespaces/hot",
                                  "/iceberg/v1/config", "/iceberg/etl@nowhere/v1/config",
                                  "/api/v2/trees/main", "/api/v2/trees/nowhere",
                                  "/api/v2/trees/main~1", "/api/v2/trees/main@0000"])
def test_answers_are_the_routes_answers(http: httpx.Client, objects: None, path: str) -> None:
    hot = http.get(path)
    # A query string sends it to FastAPI's route (the versioning API refuses
    # a parameter it does not know, so it is given one it does).
    query = {"fetch": "MINIMAL"} if path.startswith("/api/v2/") else {"unused": "1"}
    routed = http.get(path, params=query)
    assert (hot.status_code, hot.content) == (routed.status_code, routed.content)
    assert hot.headers.get("etag") == routed.headers.get("etag")
    assert hot.headers["content-type"] == routed.headers["content-type"]


def test_if_none_match_and_metrics(http: httpx.Client, objects: None) -> None:
    etag = http.get(f"{NS}/tables/t").headers["etag"]
    r = http.get(f"{NS}/tables/t", headers={"If-None-Match": etag})
    assert r.status_code == 304 and r.content == b""
    text = http.get("/metrics").text
    line = next(x for x in text.splitlines() if x.startswith("sapwood_http_requests_total")
                and 'route="/iceberg/v1/namespaces/{namespace}/tables/{table}"' in x
                and 'status="304"' in x)
    assert float(line.rsplit(" ", 1)[1]) >= 1
