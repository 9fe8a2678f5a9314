"""The jars Spark needs for Iceberg: Iceberg's official runtime for the
installed pyspark's line and its AWS bundle, from Maven Central through
Maven (spark/maven.py), once, into a user cache. ``SAPWOOD_ICEBERG_SPARK_JARS``
(comma-separated paths) skips all of this for jars of one's own.

Maven Central serves every jar Spark needs for both lines, so there is no
other way in: the fallback that rebuilt a PyPI copy of the 3.5 runtime's
missing shaded classes from Debian's packages (spark/relocate.py,
spark/debian.py) is gone with Iceberg 1.10.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spark.errors import SetupError
from spark.lines import SparkLine, current
from spark.maven import official_jars

OVERRIDE = "SAPWOOD_ICEBERG_SPARK_JARS"


@dataclass(frozen=True)
class Jars:
    paths: tuple[Path, ...]
    # "override"; "maven" (fetched now) or "maven-cache" (fetched before).
    source: str
    line: SparkLine


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


def spark_jars(log: Callable[[str], None] = print) -> Jars:
    """The jars to put on ``spark.jars`` for the installed pyspark's line;
    fetches them on first use. SetupError for a pyspark of no supported
    line, or without Maven for jars not fetched yet."""
    line = current()
    override = os.environ.get(OVERRIDE, "").strip()
    if override:
        paths = tuple(Path(p).expanduser() for p in override.split(",") if p.strip())
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise SetupError(f"{OVERRIDE} names jars that do not exist: {', '.join(missing)}")
        return Jars(paths, "override", line)
    paths, fetched = official_jars(cache_dir() / "maven", line, log)
    return Jars(paths, "maven" if fetched else "maven-cache", line)
