"""An embedded catalog for the demo: ``sapwood serve`` on a free loopback port,
in its own process, on the embedded default (a SQLite file and a warehouse
folder under a data directory). The Spark side reaches it over HTTP only."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from urllib.error import URLError
from urllib.request import urlopen

from spark.errors import SetupError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sapwood_command() -> list[str]:
    """The installed console script next to this interpreter, else on PATH."""
    exe = Path(sys.executable).with_name("sapwood")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("sapwood")
    return [found] if found else [sys.executable, "-m", "cli"]


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Terminate, then kill after 15 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class EmbeddedCatalog:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = _free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.log = data_dir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> EmbeddedCatalog:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SAPWOOD_DATA_DIR": str(self.data_dir)}
        for var in ("SAPWOOD_DATABASE_URL", "SAPWOOD_WAREHOUSE"):
            env.pop(var, None)  # the demo always runs on the embedded default
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([*sapwood_command(), "serve", "--port", str(self.port)],
                                         env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SetupError(f"the catalog server exited: {self.log.read_text()[-2000:]}")
            try:
                with urlopen(f"{self.uri}/iceberg/v1/config", timeout=2):
                    return self
            except (URLError, OSError):
                time.sleep(0.1)
        self.stop()
        raise SetupError(f"the catalog server did not answer within 60 s (log: {self.log})")

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
