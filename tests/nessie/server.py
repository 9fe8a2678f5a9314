"""A real Nessie server (0.99.0's runner jar, tests/nessie/fetch.py) on free
loopback ports, for tests and benchmarks that compare Sapwood with Nessie.

Its version store is in memory (``IN_MEMORY``) or RocksDB in a folder of
the test's (``ROCKSDB``); its HTTP and management interfaces listen on
127.0.0.1 only. Nessie's clients here (Iceberg's NessieCatalog) write the
table metadata themselves, so Nessie needs no warehouse; its own Iceberg
REST service would, but Nessie 0.99 refuses a ``file:`` warehouse
("Unknown or unsupported scheme: file"): ``properties`` can name an object
store's (``nessie.catalog.warehouses.<name>.location`` and the rest).

The JVM is held to a small heap, the C1 compiler and the serial collector:
a test server handles a few hundred requests, where C2's compiles and a
parallel collector's threads only add to its start on two cores.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.http import http_request
from tests.jvm_server import JvmServer
from tests.nessie.fetch import Jars, Java
from tests.pg import free_port

STORES = ("IN_MEMORY", "ROCKSDB")
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               # Nessie's native libraries (brotli, RocksDB) without a warning each.
               "--enable-native-access=ALL-UNNAMED")


class NessieServer(JvmServer):
    name = "Nessie"

    def __init__(self, jars: Jars, java: Java, data_dir: Path, store: str = "IN_MEMORY",
                 properties: Mapping[str, str] | None = None) -> None:
        if store not in STORES:
            raise ValueError(f"store must be one of {', '.join(STORES)}, not {store!r}")
        super().__init__(java, data_dir, data_dir / "nessie.log")
        self.jars = jars
        self.store = store
        self.properties = dict(properties or {})
        self.port = free_port()
        self.management_port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"

    @property
    def api(self) -> str:
        """The v2 API's base, as a client's ``uri`` names it."""
        return f"{self.base}/api/v2"

    def settings(self) -> dict[str, str]:
        """The Quarkus and Nessie settings the server starts with."""
        out = {
            "quarkus.http.host": "127.0.0.1",
            "quarkus.http.port": str(self.port),
            "quarkus.management.host": "127.0.0.1",
            "quarkus.management.port": str(self.management_port),
            "nessie.version.store.type": self.store,
            # The access log is the only record of what a client asked.
            "quarkus.log.file.enable": "false",
            # OpenTelemetry is off without an endpoint; say so without a warning.
            "quarkus.otel.sdk.disabled": "true",
        }
        if self.store == "ROCKSDB":
            out["nessie.version.store.persist.rocks.database-path"] = str(self.data_dir / "rocks")
        return {**out, **self.properties}

    def command(self) -> list[str]:
        return [self.java.executable, *JVM_OPTIONS,
                *(f"-D{k}={v}" for k, v in self.settings().items()),
                "-jar", str(self.jars.server)]

    def ready(self) -> bool:
        """/api/v2/config answers 200."""
        try:
            return http_request("GET", f"{self.api}/config", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def server_errors(self) -> list[str]:
        """Access-log lines of a 5xx answer (Quarkus's format: ``"GET /p HTTP/1.1" 500 n``)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line for line in text.splitlines()
                if "access-log" in line and '" 5' in line.rsplit("HTTP/", 1)[-1]]


@contextmanager
def nessie_serving(jars: Jars, java: Java, data_dir: Path, store: str = "IN_MEMORY",
                   properties: Mapping[str, str] | None = None) -> Iterator[NessieServer]:
    """A started Nessie; stopped afterwards."""
    srv = NessieServer(jars, java, data_dir, store, properties).start()
    try:
        yield srv
    finally:
        srv.stop()


def environment_ready() -> tuple[Jars, Java] | str:
    """Nessie's jars (from the cache, or fetched) and a Java 21+, or why not."""
    from spark.errors import SetupError
    from tests.nessie import fetch

    try:
        found = fetch.jars(log=lambda _: None)
    except SetupError as e:
        return str(e)
    if found is None:
        return "no Maven to fetch Nessie's jars and none cached (install Maven)"
    java = fetch.java_21()
    if java is None:
        return (f"no Java {fetch.MIN_JAVA}+ for Nessie's server (set SAPWOOD_NESSIE_JAVA_HOME, "
                f"or python -m tests.nessie.fetch --install-java)")
    if java.major < fetch.MIN_JAVA:  # one named by SAPWOOD_NESSIE_JAVA_HOME
        return (f"{java.source} names Java {java.major} ({java.executable}); Nessie's server "
                f"needs {fetch.MIN_JAVA}+")
    return found, java


if __name__ == "__main__":  # start one by hand: python -m tests.nessie.server [folder]
    import sys
    import tempfile

    ready = environment_ready()
    if isinstance(ready, str):
        sys.exit(f"error: {ready}")
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="nessie-"))
    with nessie_serving(*ready, folder, store=os.environ.get("NESSIE_STORE", "IN_MEMORY")) as n:
        print(f"Nessie at {n.api} (started in {n.started_in:.1f} s, {n.rss_mb():.0f} MB); "
              "Ctrl-C stops it", flush=True)
        try:
            while n.proc is not None and n.proc.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
