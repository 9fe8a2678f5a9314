"""Sapwood's Spark SQL extension, built once per Spark line with Maven into
the user cache.

Its source ships in the package as a Maven project (``spark/sql-extension``:
the shared code, one module per Spark line with the line's adapter). The
module of the installed pyspark's line is copied (its main sources and
POMs, not the tests) into a folder of the cache and built there with
``mvn package``; Spark itself is a provided dependency, fetched once into
the local Maven repository, so a later build needs no network. The jar's
name carries the line and a hash of what it is built from: a changed
source builds a new one. Without Maven or a JDK the extension is left out
and everything else works (the Python helpers are the same API's other
door)."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from spark.errors import SetupError
from spark.jars import cache_dir
from spark.lines import SparkLine, current
from spark.maven import required_mvn, run

CLASS = "dev.sapwood.spark.SapwoodSparkSessionExtensions"
PROJECT = Path(__file__).with_name("sql-extension")
# Bump when the build changes (its flags, the jar's layout): older jars are not reused.
FORMAT = "2"
INSTALL_JDK = ("install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless) "
               "or set JAVA_HOME to one")


def sources(line: SparkLine) -> Iterator[Path]:
    """What the line's jar is built from, relative to PROJECT: the parent
    POM, the shared main sources, and the line's module."""
    yield Path("pom.xml")
    for root in (PROJECT / "src" / "main", PROJECT / line.module):
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(PROJECT)
            if path.is_file() and "target" not in relative.parts and "test" not in relative.parts:
                yield relative


def jar_path(line: SparkLine) -> Path:
    found = list(sources(line))
    if not any(p.suffix == ".java" for p in found):
        raise SetupError(f"the extension's sources are missing from {PROJECT}; "
                         "reinstall sapwood")
    digest = hashlib.sha256(f"{FORMAT}|{line.name}".encode())
    for relative in found:
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update((PROJECT / relative).read_bytes() + b"\0")
    return cache_dir() / f"sapwood-spark-sql-{line.name}_{line.scala}-{digest.hexdigest()[:12]}.jar"


def javac() -> str | None:
    """The JDK's compiler (Maven's compiler plugin runs it): JAVA_HOME's, else
    the one on PATH; None without a JDK."""
    home = os.environ.get("JAVA_HOME")
    if home:
        found = Path(home) / "bin" / "javac"
        return str(found) if found.exists() else None
    return shutil.which("javac")


def extension_jar(log: Callable[[str], None] = print,
                  line: SparkLine | None = None) -> tuple[Path, bool]:
    """The extension's jar for ``line`` (default: the installed pyspark's),
    and whether it was built just now; SetupError without a JDK or Maven
    (saying what to install) or when the build fails."""
    line = line or current()
    target = jar_path(line)
    if target.exists():
        return target, False
    if javac() is None:
        raise SetupError(f"no javac (a JDK) was found: {INSTALL_JDK}")
    exe = required_mvn("building Sapwood's Spark SQL extension")
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    log(f"building Sapwood's Spark SQL extension for {line.describe()} with Maven "
        f"(module {line.module} of {PROJECT})")
    # A copy in the cache: the installed package may be read-only, and a build
    # leaves target/ folders behind.
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".sql-ext-") as tmp:
        work = Path(tmp) / "sql-extension"
        # Maven reads every module's POM, even to build one module.
        poms = (p.relative_to(PROJECT) for p in PROJECT.glob("spark-*/pom.xml"))
        for relative in {*sources(line), *poms}:
            (work / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(PROJECT / relative, work / relative)
        run(exe, ["-f", str(work / "pom.xml"), "-pl", line.module, "-Dmaven.test.skip=true",
                  "package"], work, "Maven could not build the Spark SQL extension")
        built = work / line.module / "target" / f"sapwood-spark-sql-{line.name}_{line.scala}.jar"
        os.replace(built, target)
    log(f"built the Spark SQL extension into {target} ({time.monotonic() - started:.1f} s)")
    return target, True


def optional_extension_jar(log: Callable[[str], None] = print) -> Path | None:
    """The jar, or None (and a note saying why) when it cannot be built here."""
    try:
        return extension_jar(log)[0]
    except SetupError as e:
        log(f"note: Sapwood's Spark SQL extension is left out: {e}")
        return None
