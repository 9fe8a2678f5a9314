"""A failed request leaves the client's connection usable.

A 500 is a bug, but when one happens the client's next request on the same
keep-alive connection must still be answered (uvicorn used to close the
connection after Starlette re-raised the error, and the next request was
reset). The 500 here is a real fault: a damaged catalog database, as fsck
would report it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.commits import CommitMeta, Put
from core.content import Namespace
from core.keys import ContentKey
from store import Store
from tests.http import http_client
from tests.server import Server


def test_the_connection_survives_a_500(tmp_path: Path) -> None:
    db = tmp_path / "sapwood.db"
    store = Store(f"sqlite:///{db}")
    store.commit("main", [Put(ContentKey(["ns"]), Namespace())], CommitMeta("namespace ns"))
    store.close()
    with sqlite3.connect(db) as conn:  # damage the commit's objects: its pack is zeros
        conn.execute("UPDATE commits SET pack = zeroblob(length(pack)) WHERE depth > 0")
    server = Server(f"sqlite:///{db}", tmp_path).start()
    try:
        with http_client(base_url=server.base, timeout=10) as client:
            for _ in range(3):
                broken = client.get("/iceberg/v1/namespaces/ns")
                assert broken.status_code == 500, broken.text
                assert broken.json()["error"]["type"] == "InternalServerError"
                # The same connection: a GET and a write are both answered.
                assert client.get("/iceberg/v1/config").status_code == 200
                r = client.post("/api/v2/admin/gc", params={"graceSeconds": "inf"})
                assert r.status_code == 400, r.text
            assert client.get("/healthz").status_code == 200
    finally:
        server.stop()
    assert server.server_errors(), "the damaged catalog should have been logged as a bug"
