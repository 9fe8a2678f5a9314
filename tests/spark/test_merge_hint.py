"""``spark.merge`` (``sw.merge``) on a conflict says the way out, as the
CLI, MERGE BRANCH and the UI do (issue 44, the trial's defect 11;
docs/spark.md), and takes ``force=`` / ``drop=`` for it. A real server and
plain HTTP; the helper called with the server's URL (no JVM needed)."""

from __future__ import annotations

import httpx
import pytest

import spark as sw
from spark.errors import CatalogError
from tests.api import spark_bodies as sb
from tests.api.test_versioning_http import head
from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server

server = server_fixture(prefix="merge-hint")


@pytest.fixture(scope="module")
def http(server: Server):
    with http_client(base_url=server.base, timeout=30) as client:
        yield client


def _replace(http: httpx.Client, ref: str, uuid: str, sql: str) -> None:
    r = http.post(f"/iceberg/{ref}/v1/namespaces/hint/views/v", json=sb.replace_view(uuid, sql))
    assert r.status_code == 200, r.text


def test_a_conflict_says_how_to_resolve_it_and_force_does(server: Server, http) -> None:
    assert http.post("/iceberg/main/v1/namespaces", json={"namespace": ["hint"]}
                     ).status_code == 200
    made = http.post("/iceberg/main/v1/namespaces/hint/views",
                     json=sb.create_view("v", "SELECT 1 AS n"))
    assert made.status_code == 200, made.text
    uuid = made.json()["metadata"]["view-uuid"]
    r = http.post("/api/v2/trees", params={"name": "dev", "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head(http, "main")})
    assert r.status_code == 200, r.text
    _replace(http, "dev", uuid, "SELECT 2 AS n")
    _replace(http, "main", uuid, "SELECT 3 AS n")
    before = head(http, "main")

    with pytest.raises(CatalogError) as e:
        sw.merge(server.base, "dev", into="main")
    assert e.value.status == 409 and e.value.conflicts == ["hint.v"]
    assert e.value.message.endswith(
        "; resolve: take dev's change with merge(..., force=['hint.v']), or keep main's "
        "value with merge(..., drop=['hint.v'])"), e.value.message
    assert head(http, "main") == before

    sw.merge(server.base, "dev", into="main", force=["hint.v"])
    view = http.get("/iceberg/main/v1/namespaces/hint/views/v").json()["metadata"]
    current = next(v for v in view["versions"]
                   if v["version-id"] == view["current-version-id"])
    assert current["representations"][0]["sql"] == "SELECT 2 AS n"
