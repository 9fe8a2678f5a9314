"""Sapwood's Spark SQL extension (Java, in ``spark/sql_extension/src``),
compiled once with the JDK's ``javac`` against the jars pyspark ships into
the user cache: no build tool, nothing downloaded. The jar's name carries a
hash of the sources and of the Spark version, so a changed source or another
pyspark builds a new one. Without a JDK the extension is left out and
everything else works (the Python helpers are the same API's other door)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from spark.errors import SetupError
from spark.jars import cache_dir, pyspark_jars

CLASS = "dev.sapwood.spark.SapwoodSparkSessionExtensions"
SOURCES = Path(__file__).with_name("sql_extension") / "src"
# Bump when the build changes (flags, the jar's layout): older jars are not reused.
FORMAT = "1"
INSTALL_JDK = ("install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless) "
               "or set JAVA_HOME to one")


def javac() -> str | None:
    """The JDK's compiler: JAVA_HOME's, else the one on PATH; None without a JDK."""
    home = os.environ.get("JAVA_HOME")
    if home:
        found = Path(home) / "bin" / "javac"
        return str(found) if found.exists() else None
    return shutil.which("javac")


def sources() -> list[Path]:
    found = sorted(SOURCES.rglob("*.java"))
    if not found:
        raise SetupError(f"the extension's sources are missing from {SOURCES}; "
                         "reinstall sapwood")
    return found


def spark_version() -> str:
    try:
        import pyspark
    except ImportError as e:
        raise SetupError("pyspark is not installed: install the Spark extra: "
                         "python -m pip install -e '.[spark]'") from e
    return str(pyspark.__version__)


def jar_path() -> Path:
    digest = hashlib.sha256(f"{FORMAT}|{spark_version()}".encode())
    for src in sources():
        digest.update(src.relative_to(SOURCES).as_posix().encode() + b"\0")
        digest.update(src.read_bytes() + b"\0")
    return cache_dir() / f"sapwood-spark-sql-{digest.hexdigest()[:12]}.jar"


# javac's own JVM: the C1 compiler alone (C2 only pays off in a JVM that
# runs long; spark.maven does the same for Maven's).
JAVAC_JVM = ("-J-XX:TieredStopAtLevel=1",)


def extension_jar(log: Callable[[str], None] = print) -> tuple[Path, bool]:
    """The extension's jar, and whether it was built just now; SetupError
    without a JDK (saying what to install) or when javac fails."""
    target = jar_path()
    if target.exists():
        return target, False
    compiler = javac()
    if compiler is None:
        raise SetupError(f"no javac (a JDK) was found: {INSTALL_JDK}")
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".sql-ext-") as tmp:
        classes = Path(tmp) / "classes"
        # The jars folder as a classpath wildcard (javac expands it itself);
        # -Xlint:-path: those jars' manifests name jars pyspark leaves out.
        # JAVAC_JVM: one short compile gains nothing from C2 (3.1 instead of
        # 4.8 s here, and half the CPU).
        done = subprocess.run(
            [compiler, *JAVAC_JVM, "--release", "17", "-Xlint:-path", "-encoding", "UTF-8",
             "-cp", str(pyspark_jars() / "*"), "-d", str(classes),
             *(str(s) for s in sources())],
            capture_output=True, text=True, check=False, timeout=600)
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()[:6]
            raise SetupError("javac could not compile the Spark SQL extension: "
                             + " ".join(said))
        partial = Path(tmp) / target.name
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n"
                         "Created-By: sapwood spark-setup\r\n\r\n")
            for cls in sorted(classes.rglob("*.class")):
                jar.write(cls, cls.relative_to(classes).as_posix())
        os.replace(partial, target)
    log(f"compiled the Spark SQL extension into {target} "
        f"({time.monotonic() - started:.1f} s)")
    return target, True


def optional_extension_jar(log: Callable[[str], None] = print) -> Path | None:
    """The jar, or None (and a note saying why) when it cannot be built here."""
    try:
        return extension_jar(log)[0]
    except SetupError as e:
        log(f"note: Sapwood's Spark SQL extension is left out: {e}")
        return None
