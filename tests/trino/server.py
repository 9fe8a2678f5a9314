"""A real single-node Trino (476, tests/trino/fetch.py) on a free loopback
port, its Iceberg catalogs pointing at a Sapwood server, and a small client
of Trino's HTTP protocol (POST /v1/statement, then follow ``nextUri``), so
the suite needs no Trino client package.

Each catalog is ``docs/trino/iceberg.properties`` filled in, as a user would
(``{uri}``: the Sapwood server's Iceberg base for one ref, ``{catalog}``: the
Trino catalog's name), with a local warehouse read through Trino's native
local file system (``fs.native-local.enabled``, ``local.location=/``).

The JVM is held to a small heap, the C1 compiler and the serial collector,
and only the Iceberg plugin is loaded (a plugin folder of the test's own with
a link to it): a test Trino runs a few dozen small queries, where C2's
compiles, a parallel collector and the other plugins only add to its start
on two cores.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.http import http_client
from tests.jvm_server import JvmServer
from tests.nessie.fetch import Java
from tests.pg import free_port

ROOT = Path(__file__).resolve().parents[2]
CATALOG_TEMPLATE = ROOT / "docs" / "trino" / "iceberg.properties"
JVM_OPTIONS = ("-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-XX:-UsePerfData", "-Djdk.attach.allowAttachSelf=true",
               "-XX:+EnableDynamicAgentLoading", "-Dfile.encoding=UTF-8",
               "--add-opens=java.base/java.nio=ALL-UNNAMED",
               "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow")


class TrinoError(Exception):
    """A query Trino failed: its error name and message."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


def catalog_properties(uri: str, catalog: str) -> str:
    """docs/trino/iceberg.properties filled in for one catalog."""
    return CATALOG_TEMPLATE.read_text().replace("{uri}", uri).replace("{catalog}", catalog)


class TrinoServer(JvmServer):
    name = "Trino"
    poll_s = 0.25
    tail_lines = 40

    def __init__(self, home: Path, java: Java, data_dir: Path,
                 catalogs: Mapping[str, str]) -> None:
        """``catalogs``: Trino catalog name → the Iceberg REST URI it reads."""
        super().__init__(java, data_dir, data_dir / "trino.log")
        self.home = home
        self.catalogs = dict(catalogs)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.client = http_client(timeout=60)

    def prepare(self) -> None:
        etc = self.data_dir / "etc"
        (etc / "catalog").mkdir(parents=True, exist_ok=True)
        for name, uri in self.catalogs.items():
            (etc / "catalog" / f"{name}.properties").write_text(catalog_properties(uri, name))
        plugins = self.data_dir / "plugin"
        plugins.mkdir(exist_ok=True)
        link = plugins / "iceberg"
        if not link.exists():
            link.symlink_to(self.home / "plugin" / "iceberg")
        (etc / "config.properties").write_text("\n".join([
            "coordinator=true",
            "node-scheduler.include-coordinator=true",
            f"http-server.http.port={self.port}",
            f"discovery.uri={self.base}",
            f"plugin.dir={plugins}",
            f"catalog.config-dir={etc / 'catalog'}",
            "query.max-memory=256MB",
            "query.max-memory-per-node=256MB",
            "task.concurrency=2",
            ""]))

    def node_settings(self) -> dict[str, str]:
        """The node's settings (system properties, as Trino's launcher passes
        them): bound to loopback only."""
        return {"node.environment": "test", "node.id": str(uuid.uuid4()),
                "node.data-dir": str(self.data_dir / "data"), "node.bind-ip": "127.0.0.1",
                "node.internal-address": "127.0.0.1"}

    def command(self) -> list[str]:
        etc = self.data_dir / "etc"
        return [self.java.executable, *JVM_OPTIONS,
                f"-Dconfig={etc / 'config.properties'}",
                *(f"-D{k}={v}" for k, v in self.node_settings().items()),
                "-Dlog.output-file=" + str(self.data_dir / "server.log"),
                "-cp", str(self.home / "lib" / "*"), "io.trino.server.TrinoServer"]

    def start(self, timeout: float = 180) -> TrinoServer:
        return super().start(timeout)

    def ready(self) -> bool:
        """The node says it has started, and answers a query."""
        try:
            info = self.client.get(f"{self.base}/v1/info", timeout=2)
            if info.status_code == 200 and not info.json().get("starting", True):
                self._query("SELECT 1", None, None)
                return True
        except (httpx.HTTPError, TrinoError, ValueError):
            pass
        return False

    def logs(self) -> list[Path]:
        return [self.log, self.data_dir / "server.log"]

    def query(self, sql: str, catalog: str | None = None,
              schema: str | None = None) -> list[list[Any]]:
        """The rows of one statement (TrinoError when it fails). A statement
        that finds no node to run on is run again, for up to 30 s: after its
        start a node announces its catalogs to the coordinator some seconds
        after it answers (NO_NODES_AVAILABLE), with nothing done."""
        deadline = time.monotonic() + 30
        while True:
            try:
                return self._query(sql, catalog, schema)
            except TrinoError as e:
                if e.name != "NO_NODES_AVAILABLE" or time.monotonic() > deadline:
                    raise
            time.sleep(0.25)

    def _query(self, sql: str, catalog: str | None, schema: str | None) -> list[list[Any]]:
        headers = {"X-Trino-User": "test"}
        if catalog:
            headers["X-Trino-Catalog"] = catalog
        if schema:
            headers["X-Trino-Schema"] = schema
        answer = self.client.post(f"{self.base}/v1/statement", content=sql.encode(),
                                  headers=headers)
        answer.raise_for_status()
        body = answer.json()
        rows: list[list[Any]] = []
        while True:
            rows += body.get("data") or []
            error = body.get("error")
            if error:
                raise TrinoError(error.get("errorName", "ERROR"), error.get("message", ""))
            next_uri = body.get("nextUri")
            if not next_uri:
                return rows
            answer = self.client.get(next_uri, headers=headers)
            if answer.status_code == 503:  # busy: the protocol says retry
                time.sleep(0.05)
                continue
            answer.raise_for_status()
            body = answer.json()

    def stop(self) -> None:
        self.client.close()
        super().stop()


@contextmanager
def trino_serving(home: Path, java: Java, data_dir: Path,
                  catalogs: Mapping[str, str]) -> Iterator[TrinoServer]:
    """A started Trino; stopped afterwards."""
    srv = TrinoServer(home, java, data_dir, catalogs).start()
    try:
        yield srv
    finally:
        srv.stop()


def environment_ready() -> tuple[Path, Java] | str:
    """Trino (from the cache, or fetched) and a Java 24+, or why not."""
    from spark.errors import SetupError
    from tests.trino import fetch

    try:
        home = fetch.server_home(log=lambda _: None)
    except SetupError as e:
        return str(e)
    if home is None:
        return "no Maven to fetch Trino and none cached (install Maven)"
    java = fetch.java_24()
    if java is None:
        return f"no Java {fetch.MIN_JAVA}+ for Trino (set {fetch.SETTING})"
    if java.major < fetch.MIN_JAVA:
        return (f"{java.source} names Java {java.major} ({java.executable}); Trino "
                f"needs {fetch.MIN_JAVA}+")
    return home, java


if __name__ == "__main__":  # start one by hand: python -m tests.trino.server URI [folder]
    import sys
    import tempfile

    ready = environment_ready()
    if isinstance(ready, str):
        sys.exit(f"error: {ready}")
    uri = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8181"
    folder = Path(sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="trino-"))
    with trino_serving(*ready, folder, {"iceberg": f"{uri}/iceberg/main"}) as t:
        print(f"Trino at {t.base} (started in {t.started_in:.1f} s); Ctrl-C stops it",
              flush=True)
        print(json.dumps(t.query("SHOW CATALOGS")))
        try:
            while t.proc is not None and t.proc.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
