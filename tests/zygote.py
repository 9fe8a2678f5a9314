"""Real ``sapwood`` processes without paying for Python's imports each time.

A server start was mostly imports: about 3 s of a test worker's CPU for each
of the suite's ~150 servers. The zygote is one process per test worker that
imports the application once and then forks a child per command; the child
sets the environment, working directory, output and ``sys.argv`` a
subprocess would have and runs the ``sapwood`` entry point (``cli.main``),
so what serves the tests is the real command in a process of its own. Nothing
of the application reads the environment at import
(tests/test_zygote.py holds that), so a child's settings are its own.

The suite's ``sapwood`` verbs (gc, fsck, log, view check ...) run the same
way (``tests.zygote_client.run``): a verb's own work, not 1-2 s of imports
each, about 200 times a run.

Protocol: one JSON line in ({"argv", "env", "cwd", "log"}, optionally "err",
a file of its own for stderr, else the log), one JSON line out ({"pid"}).
When a child ends, the zygote writes its return code (Popen's: negative for
a signal) to ``<status_dir>/<pid>``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import traceback
from pathlib import Path

# What a `sapwood serve` or a verb imports (the verbs import theirs when run);
# the rest comes in the child. The last line is what libraries import lazily
# on first use: httpx its transport (httpcore, 0.08 s: every server and verb),
# uvicorn its websocket protocol (its HTTP one comes with api.server), anyio its
# backend, a warehouse on S3 s3fs (0.2 s).
PRELOAD = ("api.app", "api.server", "cli.main", "cli.versioning", "cli.database",
           "cli.client", "cli.output", "catalog.maintenance.gc",
           "catalog.maintenance.fsck_files", "catalog.maintenance.reports", "store.fsck",
           "store.dump", "catalog.access", "psycopg", "rich.console", "rich.table",
           "pyiceberg.catalog.rest", "pyiceberg.io.pyarrow", "pyiceberg.io.fsspec",
           "httpcore", "uvicorn.protocols.websockets.auto",
           "uvicorn.lifespan.on", "anyio._backends._asyncio", "s3fs")


def _reap(status_dir: Path) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        tmp = status_dir / f".{pid}"
        tmp.write_text(str(code))
        tmp.rename(status_dir / str(pid))


def _child(request: dict[str, object]) -> None:
    """In the forked child: become the command, then exit with its code."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)  # a group of its own, as a new process would lead
        fd = os.open(str(request["log"]), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        err = os.open(str(request["err"]), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) \
            if request.get("err") else fd
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(err, 2)
        os.environ.clear()
        os.environ.update(request["env"])  # type: ignore[arg-type]
        if os.environ.get("PYTHONFAULTHANDLER"):  # as a new interpreter would
            import faulthandler

            faulthandler.enable()
        os.chdir(str(request["cwd"]))
        sys.argv = list(request["argv"])  # type: ignore[call-overload]
        from cli.main import main

        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    status_dir = Path(sys.argv[1])
    for name in PRELOAD:
        __import__(name)
    # Forking copies only the calling thread: nothing may hold a lock in another.
    assert threading.active_count() == 1, threading.enumerate()
    signal.signal(signal.SIGCHLD, lambda *_: _reap(status_dir))
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(json.dumps({"pid": pid}), flush=True)


if __name__ == "__main__":
    main()
