"""The catalog database going away under a running server: every request is
answered 503 with Retry-After and a plain message (nothing about the
database, its address or the driver), and the same server serves again once
the database is back.

The test stops its own PostgreSQL, never the suite's shared one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.api import spark_bodies as sb
from tests.fixtures import started_postgres
from tests.http import http_client
from tests.pg import TempPostgres
from tests.server import serving

pytestmark = pytest.mark.postgres

V1 = "/iceberg/v1"
UNAVAILABLE = "the catalog database is unavailable; retry later"


@pytest.fixture
def own_postgres() -> Iterator[TempPostgres]:
    """A server of this test's own: it is stopped and started again."""
    pg = started_postgres()
    yield pg
    pg.stop()


def test_an_outage_is_a_503_and_passes(own_postgres: TempPostgres, tmp_path) -> None:
    url = own_postgres.create_database("outage")
    with serving(url, tmp_path / "srv") as srv, \
            http_client(base_url=srv.base, timeout=5) as http:
        assert http.post(f"{V1}/namespaces", json={"namespace": ["ns"]}).status_code == 200
        made = http.post(f"{V1}/namespaces/ns/tables", json=sb.create_table("t"))
        assert made.status_code == 200, made.text
        fake = "a" * 64
        requests = [
            ("GET", f"{V1}/namespaces", None), ("GET", f"{V1}/namespaces/ns", None),
            ("GET", f"{V1}/namespaces/ns/tables/t", None),
            ("POST", f"{V1}/namespaces", {"namespace": ["ns2"]}),
            ("POST", f"{V1}/namespaces/ns/tables/t",
             {"updates": [{"action": "set-properties", "updates": {"a": "b"}}]}),
            ("GET", "/api/v2/trees", None), ("GET", "/api/v2/trees/main/history", None),
            ("POST", f"/api/v2/trees/main@{fake}/history/commit",
             {"operations": [{"type": "PUT", "key": {"elements": ["x"]},
                              "content": {"type": "NAMESPACE", "properties": {}}}]}),
        ]
        own_postgres.halt()
        try:
            for method, path, body in requests:
                r = http.request(method, path, json=body)
                assert r.status_code == 503, f"{method} {path}: {r.status_code} {r.text}"
                assert int(r.headers["Retry-After"]) > 0
                payload = r.json()
                message = payload["error"]["message"] if "error" in payload \
                    else payload["message"]
                assert message == UNAVAILABLE, r.text
                for internal in ("psycopg", "sqlalchemy", "127.0.0.1", str(own_postgres.port),
                                 "sapwood@", "Traceback", "onnection"):
                    assert internal not in r.text, r.text
        finally:
            own_postgres.resume()
        # Back without restarting the catalog server: broken connections are replaced.
        assert http.get(f"{V1}/namespaces/ns/tables/t").status_code == 200
        r = http.post(f"{V1}/namespaces", json={"namespace": ["after"]})
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 10  # the log is written by a thread of its own
        while "catalog database unavailable" not in (log := srv.log.read_text()) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
    assert "catalog database unavailable" in log
