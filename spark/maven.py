"""Maven, the registry's own client: the official Iceberg jars from Maven
Central, fetched once into a cache, and the builds that run it.

What a user's ``spark.jars.packages`` would fetch, but by Maven (its
checksums checked) ahead of time, into a cache: a Spark session never
downloads. ``SAPWOOD_MVN`` names the ``mvn`` to use (``off`` switches Maven
off: then only jars already in the cache, or ``SAPWOOD_ICEBERG_SPARK_JARS``,
can be used). Every plugin is pinned, so a run whose artifacts are in the
local repository makes no network request.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from spark.errors import SetupError
from spark.lines import ICEBERG, SparkLine

# The plugin that copies them, pinned (Maven's default for the goal moves).
PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
SETTING = "SAPWOOD_MVN"
INSTALL = ("install Maven (Debian: apt-get install maven) or set SAPWOOD_MVN to an mvn; "
           "or set SAPWOOD_ICEBERG_SPARK_JARS to jars of your own")


def artifacts(line: SparkLine) -> tuple[tuple[str, str, str], ...]:
    """Iceberg's runtime for the line, and its AWS bundle (only the AWS SDK,
    relocated: what S3FileIO needs), both of Iceberg ICEBERG."""
    return (("org.apache.iceberg", line.runtime, ICEBERG),
            ("org.apache.iceberg", "iceberg-aws-bundle", ICEBERG))


def mvn() -> str | None:
    """The ``mvn`` to run, or None: not installed, or switched off."""
    named = os.environ.get(SETTING, "").strip()
    if named.lower() in ("off", "0", "false", "no"):
        return None
    if named:
        if not Path(named).exists() and shutil.which(named) is None:
            raise SetupError(f"{SETTING} names {named!r}, which is not an executable")
        return shutil.which(named) or named
    return shutil.which("mvn")


def required_mvn(what: str) -> str:
    """The ``mvn`` to run for ``what``; SetupError saying what to install without one."""
    exe = mvn()
    if exe is None:
        named = os.environ.get(SETTING, "").strip()
        why = f"{SETTING}={named}" if named else "no mvn on PATH"
        raise SetupError(f"{what} needs Maven ({why}): {INSTALL}")
    return exe


def jar_names(line: SparkLine) -> tuple[str, ...]:
    return tuple(f"{a}-{v}.jar" for _, a, v in artifacts(line))


def official_jars(folder: Path, line: SparkLine, log: Callable[[str], None] = print,
                  ) -> tuple[tuple[Path, ...], bool]:
    """The line's official jars in ``folder``, fetched with Maven if missing,
    and whether they were fetched just now. SetupError without Maven, or
    with Maven's own words when it fails."""
    paths = tuple(folder / name for name in jar_names(line))
    if all(p.exists() for p in paths):
        return paths, False
    exe = required_mvn(f"fetching Iceberg's jars for {line.describe()}")
    folder.mkdir(parents=True, exist_ok=True)
    # Into a temporary folder first, then moved: a cache never holds half a jar.
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        for (group, artifact, version), path in zip(artifacts(line), paths, strict=True):
            if path.exists():
                continue
            coordinate = f"{group}:{artifact}:{version}"
            log(f"fetching {coordinate} with Maven")
            run(exe, [f"{PLUGIN}:copy", f"-Dartifact={coordinate}", f"-DoutputDirectory={tmp}"],
                Path(tmp), f"Maven could not fetch {coordinate}")
            os.replace(Path(tmp) / path.name, path)
    return paths, True


def run(exe: str, args: list[str], cwd: Path, failed: str, timeout: float = 900) -> None:
    """``mvn -B -q ARGS`` in ``cwd``; SetupError ``failed`` with Maven's
    first error lines when it fails."""
    done = subprocess.run([exe, "-B", "-q", "-C", *args], capture_output=True, text=True,
                          check=False, timeout=timeout, cwd=cwd, env=_maven_env())
    if done.returncode != 0:
        said = [line for line in (done.stdout + done.stderr).splitlines()
                if "ERROR" in line][:4]
        raise SetupError(f"{failed}: " + (" ".join(said) or f"mvn exited {done.returncode}"))


def _maven_env() -> dict[str, str]:
    """Maven's JVM with the C1 compiler alone and the serial collector: a
    copy or a small build is seconds of work, which C2's compiles and a
    parallel collector's threads only add to (2.5 instead of 4.5 s of CPU
    for a copy here). MAVEN_OPTS, when set, decides instead."""
    env = dict(os.environ)
    env.setdefault("MAVEN_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    return env
