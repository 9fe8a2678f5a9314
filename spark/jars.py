"""The jars Spark needs for Iceberg, found, fetched or assembled once into a
user cache.

First choice: Iceberg's official runtime and AWS bundle from Maven Central,
fetched with ``mvn`` (spark/maven.py). Where Maven is out of reach, the
fallback: the Iceberg Spark runtime from PyPI (``snowpark-connect-deps-iceberg``)
without the shaded Jackson and HttpClient 5 classes it refers to, which are
rebuilt here, relocated under ``org.apache.iceberg.shaded.`` as Iceberg's own
build does: Jackson from pyspark's ``jars/`` folder, HttpClient 5 from Debian
(no AWS SDK: no S3FileIO). ``SAPWOOD_ICEBERG_SPARK_JARS`` (comma-separated
paths) skips all of this for jars of one's own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from spark.debian import fetch_httpclient5
from spark.errors import SetupError
from spark.maven import SETTING as MVN_SETTING
from spark.maven import official_jars
from spark.relocate import Relocation, build_relocated_jar

RUNTIME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JACKSON = ("jackson-annotations", "jackson-core", "jackson-databind", "jackson-datatype-jsr310")
SHADED = "org.apache.iceberg.shaded."
RELOCATIONS = (Relocation("com.fasterxml.jackson", SHADED), Relocation("org.apache.hc", SHADED))
# Bump when the assembly changes, so caches built by older code are not reused.
FORMAT = "1"
OVERRIDE = "SAPWOOD_ICEBERG_SPARK_JARS"
INSTALL_SPARK = "install the Spark extra: python -m pip install -e '.[spark]'"


@dataclass(frozen=True)
class Jars:
    paths: tuple[Path, ...]
    # "override"; "maven" (fetched now) or "maven-cache"; "built" or "cache"
    # (the fallback, built now or before).
    source: str
    # Why the fallback was taken (no Maven, or what Maven said).
    fallback: str = ""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("SAPWOOD_CACHE_DIR") or Path(base) / "sapwood") / "spark"


def java() -> str:
    """The ``java`` executable Spark will use; SetupError naming the package if none."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        raise SetupError("Spark needs a Java 17 runtime and none was found: install one "
                         "(Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    return found


def java_version() -> str:
    done = subprocess.run([java(), "-version"], capture_output=True, text=True, check=False)
    return (done.stderr or done.stdout).splitlines()[0] if done.returncode == 0 else "unknown"


def pyspark_jars() -> Path:
    try:
        import pyspark
    except ImportError as e:
        raise SetupError(f"pyspark is not installed: {INSTALL_SPARK}") from e
    return Path(pyspark.__file__).parent / "jars"


def runtime_jar() -> Path:
    try:
        folder = resources.files("snowpark_connect_deps_iceberg") / "jars"
    except ModuleNotFoundError as e:
        raise SetupError(f"the Iceberg Spark runtime is not installed: {INSTALL_SPARK}") from e
    path = Path(str(folder / RUNTIME))
    if not path.exists():
        raise SetupError(f"{RUNTIME} is missing from snowpark-connect-deps-iceberg; "
                         f"{INSTALL_SPARK}")
    return path


def _jackson_jars() -> list[Path]:
    folder = pyspark_jars()
    found = []
    for name in JACKSON:
        matches = sorted(folder.glob(f"{name}-2.*.jar"))
        if not matches:
            raise SetupError(f"pyspark's jars folder has no {name} jar; {INSTALL_SPARK}")
        found.append(matches[-1])
    return found


def shaded_jar(log: Callable[[str], None] = print) -> tuple[Path, bool]:
    """The relocated Jackson + HttpClient 5 jar, and whether it was built just now."""
    jackson = _jackson_jars()
    key = hashlib.sha256("|".join([FORMAT, RUNTIME, *(j.name for j in jackson)]).encode())
    target = cache_dir() / f"iceberg-shaded-deps-{key.hexdigest()[:12]}.jar"
    if target.exists():
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    httpclient = fetch_httpclient5(cache_dir() / "debian", log)
    log("relocating " + ", ".join(j.name for j in [*jackson, *httpclient])
        + f" under {SHADED}")
    classes = build_relocated_jar([*jackson, *httpclient], RELOCATIONS, target)
    log(f"wrote {target} ({classes} classes, {time.monotonic() - started:.1f} s)")
    return target, True


def spark_jars(log: Callable[[str], None] = print) -> Jars:
    """The jars to put on ``spark.jars``; builds the shaded one on first use."""
    override = os.environ.get(OVERRIDE, "").strip()
    if override:
        paths = tuple(Path(p).expanduser() for p in override.split(",") if p.strip())
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise SetupError(f"{OVERRIDE} names jars that do not exist: {', '.join(missing)}")
        return Jars(paths, "override")
    named = os.environ.get(MVN_SETTING, "").strip()
    why = f"{MVN_SETTING}={named}" if named else f"no mvn on PATH ({MVN_SETTING} names one)"
    try:
        official = official_jars(cache_dir() / "maven", log)
    except SetupError as e:
        official, why = None, str(e)
    if official is not None:
        return Jars(official[0], "maven" if official[1] else "maven-cache")
    runtime = runtime_jar()
    shaded, built = shaded_jar(log)
    return Jars((runtime, shaded), "built" if built else "cache", why)
