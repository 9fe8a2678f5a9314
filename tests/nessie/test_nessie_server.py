"""The suite can run a real Nessie (issue 47's compatibility tests and issue
48's comparison need one): tests/nessie/fetch.py brings its runner jar and a
Java 21+, tests/nessie/server.py starts it on free loopback ports and stops
it. Without Maven, the jars or a Java 21+ this skips, or fails under
SAPWOOD_REQUIRE_SPARK=1 (CI), as the Spark tests do. One start, about 6-9 s
of a core."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from tests.http import http_request
from tests.nessie import fetch
from tests.nessie.server import NessieServer, environment_ready

REQUIRE = os.environ.get("SAPWOOD_REQUIRE_SPARK") == "1"


@pytest.fixture(scope="module")
def ready() -> tuple[fetch.Jars, fetch.Java]:
    found = environment_ready()
    if isinstance(found, str):
        if REQUIRE:
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but Nessie's server cannot run: {found}")
        pytest.skip(f"Nessie's server unavailable: {found}")
    return found


def test_nessie_starts_answers_its_config_and_stops(ready: tuple[fetch.Jars, fetch.Java],
                                                    tmp_path: Path) -> None:
    jars, java = ready
    assert java.major >= fetch.MIN_JAVA
    assert jars.server.name == f"nessie-quarkus-{fetch.VERSION}-runner.jar"
    assert jars.spark_extensions.name == f"nessie-spark-extensions-3.5_2.12-{fetch.VERSION}.jar"
    srv = NessieServer(jars, java, tmp_path / "nessie").start()
    try:
        config = http_request("GET", f"{srv.api}/config", timeout=10)
        assert config.status_code == 200, config.text
        body = config.json()
        assert body["defaultBranch"] == "main"
        assert body["maxSupportedApiVersion"] == 2
        assert body["specVersion"].startswith("2.")
        # A fresh repository: main is at the hash that stands for "no commit".
        main = http_request("GET", f"{srv.api}/trees/main", timeout=10).json()
        assert main == {"reference": {"type": "BRANCH", "name": "main",
                                      "hash": body["noAncestorHash"]}}
        assert srv.started_in is not None and srv.started_in > 0
        assert srv.rss_mb() > 0
        assert srv.server_errors() == []
    finally:
        srv.stop()
    assert srv.proc is not None and srv.proc.poll() is not None
    with socket.socket() as s:  # its port is free again
        assert s.connect_ex(("127.0.0.1", srv.port)) != 0


def test_a_java_is_told_by_its_feature_release(tmp_path: Path) -> None:
    """Java 8 calls itself 1.8; later ones their feature release first."""
    said = {"old": 'openjdk version "1.8.0_392"', "new": 'openjdk version "25.0.3" 2026-04-21',
            "ea": 'openjdk version "26-ea" 2026-03-17'}
    for name, line in said.items():
        exe = tmp_path / name
        exe.write_text(f"#!/bin/sh\necho '{line}' >&2\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    assert fetch.java_major(str(tmp_path / "old")) == 8
    assert fetch.java_major(str(tmp_path / "new")) == 25
    assert fetch.java_major(str(tmp_path / "ea")) == 26
    assert fetch.java_major(str(tmp_path / "missing")) is None
