"""SAPWOOD_ALLOWED_HOSTS and its default (loopback names plus the bound
address), on real servers. The default on the usual loopback server is
covered by test_hostile."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from spark.embedded import sapwood_command, stop_process
from tests.http import http_request
from tests.pg import free_port
from tests.server import serving, wait_until_serving


def _status(base: str, host: str) -> int:
    r = http_request("GET", f"{base}/iceberg/v1/namespaces", headers={"Host": host}, timeout=5)
    if r.status_code == 400:
        assert "SAPWOOD_ALLOWED_HOSTS" in r.json()["error"]["message"]
    return r.status_code


def test_configured_names_only(tmp_path: Path) -> None:
    env = {"SAPWOOD_ALLOWED_HOSTS": " catalog.example ,127.0.0.1"}
    with serving(f"sqlite:///{tmp_path / 'db.sqlite'}", tmp_path / "srv", env) as srv:
        for host in ("catalog.example", "catalog.example:8181", "CATALOG.example.",
                     f"127.0.0.1:{srv.port}"):
            assert _status(srv.base, host) == 200, host
        # Listing names replaces the defaults: localhost is no longer one.
        for host in ("localhost", "[::1]", "evil.example", "catalog.example.evil",
                     "xcatalog.example"):
            assert _status(srv.base, host) == 400, host


def test_star_allows_any(tmp_path: Path) -> None:
    env = {"SAPWOOD_ALLOWED_HOSTS": "*"}
    with serving(f"sqlite:///{tmp_path / 'db.sqlite'}", tmp_path / "srv", env) as srv:
        for host in ("evil.example", "anything:1", "10.1.2.3"):
            assert _status(srv.base, host) == 200, host


def test_the_bound_address_is_served(tmp_path: Path) -> None:
    """``sapwood serve --host 127.0.0.2`` answers to 127.0.0.2 and the loopback
    names, and to no other address."""
    port = free_port()
    env = dict(os.environ, SAPWOOD_DATA_DIR=str(tmp_path))
    env.pop("SAPWOOD_ALLOWED_HOSTS", None)
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*sapwood_command(), "serve", "--host", "127.0.0.2", "--port",
                                 str(port)], env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.2:{port}"
    try:
        wait_until_serving(proc, base, log)
        for host in (f"127.0.0.2:{port}", "127.0.0.2", "localhost", "127.0.0.1"):
            assert _status(base, host) == 200, host
        for host in ("127.0.0.3", "0.0.0.0", "evil.example"):
            assert _status(base, host) == 400, host
    finally:
        stop_process(proc)
    assert "internal error" not in log.read_text()
