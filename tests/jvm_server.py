"""A server on the JVM that the suite starts itself (Nessie, Trino): its
process with its output in a log, a start that waits until the server says
it is ready or fails with the log's tail, a stop, and the process's CPU and
memory. Each server says how it is started (``command``), what it writes
first (``prepare``) and when it is ready (``ready``)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Self

from spark.embedded import stop_process
from tests.nessie.fetch import Java
from tests.processes import cpu_seconds, rss_mb


class JvmServer:
    # In its messages: "<name> exited", "<name> did not start in time".
    name = "the server"
    # How often readiness is asked while it starts.
    poll_s = 0.1
    # Lines of its log a failed start shows.
    tail_lines = 30

    def __init__(self, java: Java, data_dir: Path, log: Path) -> None:
        self.java = java
        self.data_dir = data_dir
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        # Seconds from the process's start to its first ready answer.
        self.started_in: float | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        """What the server reads at its start (configuration files)."""

    def ready(self) -> bool:
        """Whether it answers as a started server does (False while it
        starts: its connection refused, its answers not yet those)."""
        raise NotImplementedError

    def start(self, timeout: float = 120) -> Self:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        began = time.monotonic()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.data_dir)
        try:
            self._wait(began + timeout)
        except RuntimeError:
            self.stop()
            raise
        self.started_in = time.monotonic() - began
        return self

    def _wait(self, deadline: float) -> None:
        """Until ``ready``; RuntimeError (with the log's tail) when the
        process exits or the deadline passes."""
        assert self.proc is not None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.proc.returncode}): "
                                   f"{self._tail()}")
            if self.ready():
                return
            time.sleep(self.poll_s)
        raise RuntimeError(f"{self.name} did not start in time: {self._tail()}")

    def logs(self) -> list[Path]:
        """The files its output goes to."""
        return [self.log]

    def _tail(self, lines: int | None = None) -> str:
        text = "".join(f.read_text(errors="replace") for f in self.logs() if f.exists())
        return "\n".join(text.splitlines()[-(lines or self.tail_lines):])

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def _running(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def cpu_seconds(self) -> float:
        """User and system CPU the JVM has used so far (0 when not running)."""
        pid = self._running()
        return (cpu_seconds(pid) or 0.0) if pid is not None else 0.0

    def rss_mb(self) -> float:
        """The server's resident memory now (0 when it is not running)."""
        pid = self._running()
        return (rss_mb(pid) or 0.0) if pid is not None else 0.0
