"""A real ``sapwood serve`` process on a free port, for tests and benchmarks."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx

from spark.embedded import sapwood_command, stop_process  # noqa: F401 (tests import it here)
from tests.http import http_request
from tests.pg import free_port
from tests.zygote_client import Forked, spawn


def wait_until_serving(proc: Forked | subprocess.Popen[bytes], base: str, log: Path,
                       timeout: float = 60) -> None:
    """Until the server answers its config route; RuntimeError (with its log)
    when it exits or stays silent."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sapwood serve exited: {log.read_text()}")
        try:
            if http_request("GET", f"{base}/iceberg/v1/config", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"sapwood serve did not answer in {timeout}s: {log.read_text()}")


class Server:
    def __init__(self, database_url: str, data_dir: Path, workers: int = 1,
                 extra_env: dict[str, str] | None = None, warehouse: str | None = None,
                 client_props: dict[str, str] | None = None) -> None:
        self.database_url = database_url
        self.data_dir = data_dir
        # Replicas share one: pass it (a URI).
        self.warehouse = warehouse or (data_dir / "warehouse").resolve().as_uri()
        # What PyIceberg clients of this server need (an object store's settings).
        self.client_props = client_props or {}
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.extra_env = extra_env or {}
        self.proc: Forked | subprocess.Popen[bytes] | None = None
        self.log = data_dir / "server.log"

    def start(self, timeout: float = 60) -> Server:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, SAPWOOD_DATA_DIR=str(self.data_dir), **self.extra_env)
        args = ["serve", "--port", str(self.port), "--database", self.database_url,
                "--warehouse", self.warehouse, "--workers", str(self.workers)]
        self.proc = spawn(args, env, self.log)
        try:
            wait_until_serving(self.proc, self.base, self.log, timeout)
        except RuntimeError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)  # type: ignore[arg-type]

    def uri(self, ref: str | None = None) -> str:
        return f"{self.base}/iceberg" + (f"/{quote(ref, safe='')}" if ref else "")

    def catalog(self, ref: str | None = None, **props: str):  # type: ignore[no-untyped-def]
        from pyiceberg.catalog.rest import RestCatalog

        return RestCatalog(f"sapwood-{ref or 'default'}", uri=self.uri(ref),
                           **{**self.client_props, **props})

    def server_errors(self) -> list[str]:
        """Lines of the server log that report a 5xx (each one is a bug)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line for line in text.splitlines() if "internal error" in line]


@contextmanager
def serving(database_url: str, data_dir: Path, extra_env: dict[str, str] | None = None,
            warehouse: str | None = None, client_props: dict[str, str] | None = None,
            workers: int = 1) -> Iterator[Server]:
    """A started server; afterwards, stopped, and any 5xx it logged fails the test.
    ``extra_env`` sets SAPWOOD_* variables (SAPWOOD_AUTH=1 turns authentication on)."""
    srv = Server(database_url, data_dir, workers=workers, extra_env=extra_env,
                 warehouse=warehouse, client_props=client_props).start()
    try:
        yield srv
    finally:
        srv.stop()
    errors = srv.server_errors()
    assert not errors, f"the server answered 5xx: {errors}"
