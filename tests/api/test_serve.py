"""``sapwood serve`` as a user starts it: no options (the embedded default under
the data directory), the SAPWOOD_* settings, and several workers."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.api import spark_bodies as sb
from tests.http import http_client, http_request
from tests.pg import free_port
from tests.server import sapwood_command, wait_until_serving


def _start(args: list[str], env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen([*sapwood_command(), "serve", "--port", str(port), *args],
                                env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, base, log)
    except RuntimeError as e:
        proc.kill()
        pytest.fail(str(e))
    return proc, base


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(20)


def test_serve_with_no_options_uses_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "home" / ".sapwood"
    env = {"SAPWOOD_DATA_DIR": str(data), "SAPWOOD_DATABASE_URL": "", "SAPWOOD_WAREHOUSE": ""}
    proc, base = _start([], env, tmp_path / "log")
    try:
        # It says where each surface is, and each answers there.
        said = (tmp_path / "log").read_text().splitlines()
        assert said[0] == (f"Sapwood: database sqlite:///{data / 'sapwood.db'}, warehouse "
                           f"{(data / 'warehouse').resolve().as_uri()}, authentication off")
        assert said[1:4] == [f"API: {base}/iceberg (Iceberg REST), {base}/api/v2 (versioning)",
                             f"UI: {base}/ui", f"metrics: {base}/metrics"]
        for url in (f"{base}/iceberg/v1/config", f"{base}/api/v2/config", f"{base}/ui",
                    f"{base}/metrics", f"{base}/openapi.json"):
            assert http_request("GET", url, follow_redirects=True).status_code == 200, url
        # No interactive API page (its scripts come from a CDN): the 404 says
        # where the reference is.
        for page in ("/docs", "/redoc"):
            r = http_request("GET", base + page)
            assert r.status_code == 404, r.text
            message = r.json()["error"]["message"]
            assert "/openapi.json" in message and "docs/versioning-api.md" in message \
                and "docs/iceberg-rest.md" in message, message
        with http_client(base_url=f"{base}/iceberg/v1") as c:
            assert c.post("/namespaces", json={"namespace": ["ns"]}).status_code == 200
            r = c.post("/namespaces/ns/tables", json=sb.create_table("t"))
            assert r.status_code == 200, r.text
            location = r.json()["metadata-location"]
            # Outside the warehouse is refused by default.
            r = c.post("/namespaces/ns/tables", json={**sb.create_table("x"),
                                                     "location": (tmp_path / "x").as_uri()})
            assert r.status_code == 400 and "outside the warehouse" in r.text
    finally:
        _stop(proc)
    assert (data / "sapwood.db").exists()
    assert location.startswith((data / "warehouse").resolve().as_uri() + "/ns/t_")
    assert Path(location.removeprefix("file://")).exists()


def test_external_locations_when_allowed_and_two_workers(tmp_path: Path) -> None:
    env = {"SAPWOOD_DATA_DIR": str(tmp_path / "d"),
           "SAPWOOD_DATABASE_URL": f"sqlite:///{tmp_path / 'c.db'}",
           "SAPWOOD_WAREHOUSE": str(tmp_path / "wh"),
           "SAPWOOD_ALLOW_EXTERNAL_LOCATIONS": "1"}
    proc, base = _start(["--workers", "2"], env, tmp_path / "log")
    try:
        with http_client(base_url=f"{base}/iceberg/v1") as c:
            assert c.post("/namespaces", json={"namespace": ["ns"]}).status_code == 200
            outside = (tmp_path / "elsewhere" / "x").as_uri()
            r = c.post("/namespaces/ns/tables", json={**sb.create_table("x"),
                                                     "location": outside})
            assert r.status_code == 200, r.text
            assert r.json()["metadata-location"].startswith(outside + "/metadata/00000-")
            for _ in range(20):  # keep-alive requests, spread over both workers
                assert c.get("/namespaces/ns").status_code == 200
    finally:
        _stop(proc)


def test_shared_socket_says_tcp() -> None:
    """asyncio turns Nagle off only on connections whose listening socket says
    IPPROTO_TCP; without it every keep-alive answer waited 40 ms for an ACK."""
    from api.server import _listening_socket

    sock = _listening_socket("127.0.0.1", free_port())
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
