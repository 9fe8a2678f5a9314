"""The official Iceberg jars from Maven Central, fetched once with ``mvn``.

What a user's ``spark.jars.packages`` would fetch, but by Maven (the
registry's own client, with its checksums checked) ahead of time, into a
cache: a Spark session never downloads. ``SAPWOOD_MVN`` names the ``mvn`` to
use; ``SAPWOOD_MVN=off`` skips Maven (the jars are then built from PyPI and
Debian packages, spark/jars.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from spark.errors import SetupError

# The runtime is the 1.10 line's newest, the version the PyPI fallback holds,
# so both ways test one Iceberg. The AWS bundle holds only the AWS SDK (its
# own Iceberg classes are relocated under org.apache.iceberg.aws.shaded): its
# newest release the registry serves of the line does for any 1.10 runtime.
ARTIFACTS = (
    ("org.apache.iceberg", "iceberg-spark-runtime-3.5_2.12", "1.10.2"),
    ("org.apache.iceberg", "iceberg-aws-bundle", "1.10.1"),
)
# The plugin that copies them, pinned (Maven's default for the goal moves).
PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
SETTING = "SAPWOOD_MVN"


def mvn() -> str | None:
    """The ``mvn`` to fetch with, or None: not installed, or switched off."""
    named = os.environ.get(SETTING, "").strip()
    if named.lower() in ("off", "0", "false", "no"):
        return None
    if named:
        if not Path(named).exists() and shutil.which(named) is None:
            raise SetupError(f"{SETTING} names {named!r}, which is not an executable")
        return shutil.which(named) or named
    return shutil.which("mvn")


def jar_names() -> tuple[str, ...]:
    return tuple(f"{a}-{v}.jar" for _, a, v in ARTIFACTS)


def official_jars(folder: Path, log: Callable[[str], None] = print,
                  ) -> tuple[tuple[Path, ...], bool] | None:
    """The official jars in ``folder``, fetched with Maven if missing, and
    whether they were fetched just now; None when there is no Maven.
    SetupError (with Maven's own words) when Maven is there but fails."""
    paths = tuple(folder / name for name in jar_names())
    if all(p.exists() for p in paths):
        return paths, False
    exe = mvn()
    if exe is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    # Into a temporary folder first, then moved: a cache never holds half a jar.
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        for group, artifact, version in ARTIFACTS:
            coordinate = f"{group}:{artifact}:{version}"
            log(f"fetching {coordinate} with Maven")
            done = subprocess.run(
                [exe, "-B", "-q", "-C", f"{PLUGIN}:copy", f"-Dartifact={coordinate}",
                 f"-DoutputDirectory={tmp}"],
                capture_output=True, text=True, check=False, timeout=900, cwd=tmp,
                env=_maven_env())
            if done.returncode != 0:
                said = [line for line in (done.stdout + done.stderr).splitlines()
                        if "ERROR" in line][:3]
                raise SetupError(f"Maven could not fetch {coordinate}: "
                                 + (" ".join(said) or f"mvn exited {done.returncode}"))
        for p in paths:
            os.replace(Path(tmp) / p.name, p)
    return paths, True


def _maven_env() -> dict[str, str]:
    """Maven's JVM with the C1 compiler alone and the serial collector: a
    copy is seconds of work, which C2's compiles and a parallel collector's
    threads only add to (2.5 instead of 4.5 s of CPU here). MAVEN_OPTS, when
    set, decides instead."""
    env = dict(os.environ)
    env.setdefault("MAVEN_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    return env
