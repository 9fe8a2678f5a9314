"""Watching a running server: /metrics scraped and parsed by prometheus_client
with counters moving as requests are made, JSON access logs with the request
id (echoed in the response), principal, reference, route template, status
and duration, and the health probes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine, text

from tests.api import spark_bodies as sb
from tests.fixtures import BACKENDS, server_fixture
from tests.http import http_client
from tests.server import Server

observed = server_fixture(BACKENDS, env={"SAPWOOD_LOG_FORMAT": "json"}, prefix="observe")


def scrape(c: httpx.Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = c.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.text) for s in family.samples}


def requests_of(samples: dict, route: str, status: str, method: str = "GET") -> float:
    key = ("sapwood_http_requests_total",
           (("method", method), ("route", route), ("status", status)))
    return samples.get(key, 0.0)



def logged(server: Server, request_id: str) -> list[dict[str, Any]]:
    """The server's JSON log lines, once the access line of ``request_id``
    is among them (lines are written by a thread of their own, a moment
    after the answer)."""
    deadline = time.monotonic() + 10
    while True:
        lines = [json.loads(x) for x in Path(server.log).read_text().splitlines()
                 if x.startswith("{")]
        if any(x.get("request_id") == request_id for x in lines) or \
                time.monotonic() > deadline:
            return lines
        time.sleep(0.02)

def test_metrics_move_with_requests(observed: Server) -> None:
    c = http_client(base_url=observed.base)
    before = scrape(c)
    assert c.post("/iceberg/v1/namespaces", json={"namespace": ["obs"]}).status_code == 200
    assert c.post("/iceberg/v1/namespaces/obs/tables",
                  json=sb.create_table("t")).status_code == 200
    for _ in range(3):
        assert c.get("/iceberg/v1/namespaces/obs/tables/t").status_code == 200
    assert c.get("/iceberg/v1/namespaces/obs/tables/nope").status_code == 404
    after = scrape(c)
    route = "/iceberg/v1/namespaces/{namespace}/tables/{table}"
    assert requests_of(after, route, "200") - requests_of(before, route, "200") == 3
    assert requests_of(after, route, "404") - requests_of(before, route, "404") == 1
    count = ("sapwood_http_request_duration_seconds_count", (("method", "GET"),
                                                            ("route", route)))
    assert after[count] - before.get(count, 0) == 4
    commits = ("sapwood_store_commits_total", ())
    assert after[commits] - before[commits] == 2
    assert 0 <= after[("sapwood_cache_hit_ratio", (("cache", "commits"),))] <= 1
    assert ("sapwood_db_connections", (("pool", "read"), ("state", "in_use"))) in after
    assert ("sapwood_merges_total", (("outcome", "applied"),)) in after


def test_request_ids_and_json_access_logs(observed: Server) -> None:
    c = http_client(base_url=observed.base)
    given = c.get("/iceberg/v1/config", headers={"X-Request-Id": "trace-42"})
    assert given.headers["x-request-id"] == "trace-42"
    made = c.get("/api/v2/trees/main")
    rid = made.headers["x-request-id"]
    assert len(rid) == 32 and rid != "trace-42"
    # A header that is not a sane token is replaced, not echoed.
    odd = c.get("/healthz", headers={"X-Request-Id": "a b\tc"})
    assert odd.headers["x-request-id"] != "a b\tc"
    lines = logged(observed, rid)
    access = {line["request_id"]: line for line in lines if line["logger"] == "sapwood.access"}
    line = access["trace-42"]
    assert line["route"] == "/iceberg/v1/config" and line["status"] == 200
    assert line["method"] == "GET" and line["principal"] is None
    assert isinstance(line["duration_ms"], float) and line["level"] == "info"
    assert access[rid]["route"] == "/api/v2/trees/{ref}"
    on_branch = c.get("/iceberg/main/v1/namespaces")
    lines = logged(observed, on_branch.headers["x-request-id"])
    line = next(x for x in lines if x.get("request_id") == on_branch.headers["x-request-id"])
    assert line["reference"] == "main"


def test_health_and_readiness(observed: Server) -> None:
    c = http_client(base_url=observed.base)
    assert c.get("/healthz").json() == {"status": "up"}
    assert c.get("/readyz").json() == {"status": "ready"}
    # A database whose schema is behind this version is not ready.
    url = observed.database_url
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            head = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            conn.execute(text("UPDATE alembic_version SET version_num = '0001'"))
        r = c.get("/readyz")
        assert r.status_code == 503 and "revision 0001" in r.json()["reason"], r.text
    finally:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": head})
        engine.dispose()
    assert c.get("/readyz").status_code == 200


def test_caches_stay_within_their_byte_budget(tmp_path: Path) -> None:
    """Issue 28: with SAPWOOD_CACHE_BYTES small, reading many tables leaves
    every cache within its share, and /metrics says what each holds."""
    from tests.server import serving

    budget = 2_000_000
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path,
                 extra_env={"SAPWOOD_CACHE_BYTES": str(budget)}) as server:
        c = http_client(base_url=server.base, timeout=30)
        assert c.post("/iceberg/v1/namespaces", json={"namespace": ["m"]}).status_code == 200
        for i in range(60):
            assert c.post("/iceberg/v1/namespaces/m/tables",
                          json=sb.create_table(f"t{i}")).status_code == 200
        for i in range(60):
            assert c.get(f"/iceberg/v1/namespaces/m/tables/t{i}").status_code == 200
        samples = scrape(c)
        held = {dict(k[1])["cache"]: v for k, v in samples.items()
                if k[0] == "sapwood_cache_bytes"}
        limits = {dict(k[1])["cache"]: v for k, v in samples.items()
                  if k[0] == "sapwood_cache_budget_bytes"}
        assert {"nodes", "commits", "files_tables"} <= set(held)
        assert all(held[name] <= limits[name] for name in limits)
        assert sum(limits.values()) <= budget
        assert held["files_tables"] > 0 and held["commits"] > 0
