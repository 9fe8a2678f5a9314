"""The test side of tests/zygote.py: ``spawn`` runs a ``sapwood`` command
forked from this worker's zygote and hands back a Popen-like handle.
SAPWOOD_TEST_ZYGOTE=0 starts every command as a plain subprocess instead."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from spark.embedded import sapwood_command

ROOT = Path(__file__).resolve().parents[1]
ENABLED = os.environ.get("SAPWOOD_TEST_ZYGOTE", "1") != "0"


class Forked:
    """What the tests use of a Popen, for a child of the zygote (which reaps
    it and writes its return code where ``poll`` looks)."""

    def __init__(self, pid: int, status: Path) -> None:
        self.pid = pid
        self._status = status
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self._status.exists():
            self.returncode = int(self._status.read_text())
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
            time.sleep(0.01)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _Zygote:
    def __init__(self) -> None:
        self.status_dir = Path(tempfile.mkdtemp(prefix="sapwood-zygote-"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote", str(self.status_dir)], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lock = threading.Lock()  # one request and its answer at a time
        ready = self._answer()
        assert "ready" in ready, ready

    def _answer(self) -> dict[str, int]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the test zygote exited")
        return json.loads(line)  # type: ignore[no-any-return]

    def fork(self, argv: list[str], env: dict[str, str], log: Path,
             err: Path | None = None) -> Forked:
        request = {"argv": argv, "env": env, "cwd": os.getcwd(), "log": str(log),
                   "err": str(err) if err else None}
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            pid = self._answer()["pid"]
        return Forked(pid, self.status_dir / str(pid))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(10)


_zygote: _Zygote | None = None
_zygote_lock = threading.Lock()


def spawn(args: list[str], env: dict[str, str], log: Path, err: Path | None = None,
          ) -> Forked | subprocess.Popen[bytes]:
    """``sapwood ARGS`` with ``env``, its output appended to ``log`` (its
    stderr to ``err`` when given)."""
    global _zygote
    if not ENABLED:
        with open(log, "ab") as out:
            if err is None:
                return subprocess.Popen([*sapwood_command(), *args], env=env, stdout=out,
                                        stderr=subprocess.STDOUT)
            with open(err, "ab") as errors:
                return subprocess.Popen([*sapwood_command(), *args], env=env, stdout=out,
                                        stderr=errors)
    with _zygote_lock:
        if _zygote is None or _zygote.proc.poll() is not None:
            _zygote = _Zygote()
            atexit.register(_zygote.close)
    return _zygote.fork(["sapwood", *args], env, log, err)


def run(args: list[str], *, env: dict[str, str] | None = None, timeout: float = 120,
        check: bool = False) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([sapwood, *args], capture_output=True, text=True)``,
    forked from the zygote: ``env`` is added to this process's environment
    (COLUMNS and the like are the child's own); stdout and stderr apart. A
    verb that outlives ``timeout`` is killed and TimeoutExpired raised."""
    with tempfile.TemporaryDirectory(prefix="sapwood-run-") as tmp:
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        proc = spawn(args, {**os.environ, **(env or {})}, out, err)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
            raise
        done = subprocess.CompletedProcess(["sapwood", *args], code, out.read_text(),
                                           err.read_text())
    if check:
        done.check_returncode()
    return done
