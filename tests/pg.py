"""A throwaway PostgreSQL server for the test suite (Debian's initdb/pg_ctl).

initdb refuses to run as root, so as root the server runs as the 'postgres'
user on a folder that user owns.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def find_pg_bin(name: str) -> str | None:
    """SAPWOOD_PG_BIN names the folder of the server binaries, if set."""
    folder = os.environ.get("SAPWOOD_PG_BIN")
    if folder is not None:
        path = os.path.join(folder, name)
        return path if os.access(path, os.X_OK) else None
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TempPostgres:
    def __init__(self) -> None:
        self.initdb = find_pg_bin("initdb")
        self.pg_ctl = find_pg_bin("pg_ctl")
        if not self.initdb or not self.pg_ctl:
            raise RuntimeError("PostgreSQL's initdb/pg_ctl not found: install the Debian "
                               "package 'postgresql' (apt-get install postgresql)")
        self.base = Path(tempfile.mkdtemp(prefix="sapwood-pg-"))
        self.data = self.base / "data"
        self.port = free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.base, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        proc = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {proc.stdout}\n{proc.stderr}")

    def start(self) -> str:
        self._run(self.initdb, "-D", str(self.data), "-U", "sapwood", "--auth=trust",
                  "-E", "UTF8", "--no-locale")
        self.resume()
        return f"postgresql+psycopg://sapwood@127.0.0.1:{self.port}"

    def halt(self) -> None:
        """Stop the server at once (as a crash would), keeping its data."""
        self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def resume(self) -> None:
        """Start the server on its data folder and port (again, after halt)."""
        # fsync off: the suite's crashes are of processes (kill -9, an
        # immediate stop), never of the machine, and the kernel keeps what
        # was written; commits still write their WAL before they answer
        # (synchronous_commit stays on), so an acknowledged commit survives
        # them all. What it saves is a disk flush per commit.
        opts = (f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 "
                "-c max_connections=200 -c fsync=off -c full_page_writes=off")
        self._run(self.pg_ctl, "-D", str(self.data), "-o", opts, "-l",
                  str(self.base / "server.log"), "-w", "-t", "60", "start")

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.base, ignore_errors=True)

    def create_database(self, name: str, template: str | None = None) -> str:
        """A new database ``name``; a copy of database ``template`` when given
        (PostgreSQL copies its files: no statement of the template runs again)."""
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=sapwood dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"' +
                         (f' TEMPLATE "{template}"' if template else ""))
        return f"postgresql+psycopg://sapwood@127.0.0.1:{self.port}/{name}"
