"""The Iceberg REST Compatibility Kit's jars, fetched with Maven into a cache.

``python -m tests.rck.fetch`` (tests/run.sh runs it) finds the newest Iceberg
release on Maven Central whose ``iceberg-open-api`` has the kit's ``tests``
and ``test-fixtures`` jars (1.12.0 has none; 1.11.0 has), and copies the
kit's runtime classpath (tests/rck/pom.xml) into
``~/.cache/sapwood/rck/<version>/``: Maven (the registry's own client, its
checksums checked) reads only Maven Central. Which version is newest is
asked again once a day; in between, and whenever Maven or the network is
missing, the newest complete copy in the cache is used, so a machine
offline still runs the kit it fetched before. ``SAPWOOD_MVN`` names the
``mvn`` as for Spark's jars (spark/maven.py; ``off`` skips Maven).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spark.errors import SetupError
from spark.maven import _maven_env, mvn

POM = Path(__file__).with_name("pom.xml")
GROUP, ARTIFACT = "org.apache.iceberg", "iceberg-open-api"
# Plugins pinned (Maven's defaults move).
DEPENDENCY = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
HELP = "org.apache.maven.plugins:maven-help-plugin:3.5.1"
# How long the answer to "which version is newest" is trusted.
RECHECK_S = 24 * 3600
# Versions tried, newest first, before giving up (a release whose kit jars
# are missing is skipped).
TRIES = 4
# Written last into a version's folder: the folder is complete.
DONE = "classpath.txt"
_RELEASE = re.compile(r"^\d+(\.\d+)+$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Kit:
    version: str
    folder: Path
    source: str  # "fetched", "cached" (checked today) or "offline" (not checked)

    @property
    def classpath(self) -> str:
        return str(self.folder / "*")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("SAPWOOD_CACHE_DIR") or Path(base) / "sapwood") / "rck"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def cached_versions(root: Path | None = None) -> list[str]:
    """Versions with a complete copy in the cache, newest first."""
    root = root or cache_dir()
    found = [p.name for p in root.glob("*") if _RELEASE.match(p.name) and (p / DONE).exists()]
    return sorted(found, key=_key, reverse=True)


def _stamp(root: Path) -> dict[str, object]:
    try:
        data = json.loads((root / "newest.json").read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def kit(log: Callable[[str], None] = print) -> Kit | None:
    """The kit to run: fetched if need be; None when there is none (no Maven
    and nothing cached). SetupError, with Maven's words, when Maven fails
    and nothing is cached."""
    root = cache_dir()
    stamp = _stamp(root)
    checked, newest = stamp.get("checked"), stamp.get("version")
    if (isinstance(checked, (int, float)) and isinstance(newest, str)
            and time.time() - checked < RECHECK_S and newest in cached_versions(root)):
        return Kit(newest, root / newest, "cached")
    exe = mvn()
    if exe is None:
        return _offline(root, log, "no mvn (SAPWOOD_MVN names one)")
    try:
        version, fetched = _newest(exe, root, log)
    except SetupError as e:
        found = _offline(root, log, str(e))
        if found is None:
            raise
        return found
    root.mkdir(parents=True, exist_ok=True)
    (root / "newest.json").write_text(json.dumps({"version": version, "checked": time.time()}))
    return Kit(version, root / version, "fetched" if fetched else "cached")


def _offline(root: Path, log: Callable[[str], None], why: str) -> Kit | None:
    have = cached_versions(root)
    if not have:
        return None
    log(f"note: using the cached kit {have[0]} ({why})")
    return Kit(have[0], root / have[0], "offline")


def _newest(exe: str, root: Path, log: Callable[[str], None]) -> tuple[str, bool]:
    """The newest release whose kit resolves, and whether it was fetched now."""
    versions = _published(exe)
    have = set(cached_versions(root))
    for version in versions[:TRIES]:
        if version in have:
            return version, False
        if _copy(exe, version, root, log):
            return version, True
        log(f"Iceberg {version} has no REST Compatibility Kit jars on Maven Central; "
            "trying the release before")
    raise SetupError(f"none of Iceberg {', '.join(versions[:TRIES])} has the REST "
                     "Compatibility Kit's jars (iceberg-open-api tests, test-fixtures)")


def _run(exe: str, args: list[str], cwd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([exe, "-B", "-q", "-f", str(POM), *args],
                          capture_output=True, text=True, check=False, timeout=900,
                          cwd=cwd, env=_maven_env())


def _errors(done: subprocess.CompletedProcess[str]) -> str:
    said = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line][:3]
    return " ".join(said) or f"mvn exited {done.returncode}"


def _published(exe: str) -> list[str]:
    """The releases of iceberg-open-api on Maven Central, newest first: Maven
    refreshes the artifact's maven-metadata.xml (-U) and says where its local
    repository is, whose copy of the metadata is read."""
    with tempfile.TemporaryDirectory() as tmp:
        done = _run(exe, ["-U", f"{DEPENDENCY}:get", f"-DgroupId={GROUP}",
                          f"-DartifactId={ARTIFACT}", "-Dversion=RELEASE", "-Dpackaging=pom",
                          "-Dtransitive=false", f"{HELP}:evaluate",
                          "-Dexpression=settings.localRepository", "-DforceStdout"], tmp)
    if done.returncode != 0:
        raise SetupError(f"Maven could not read {GROUP}:{ARTIFACT}'s versions: {_errors(done)}")
    # The last line printed; Maven's console may wrap it in colour codes.
    said = _ANSI.sub("", done.stdout).strip().splitlines()
    folder = Path(said[-1].strip() if said else "") / GROUP.replace(".", "/") / ARTIFACT
    versions: set[str] = set()
    for meta in folder.glob("maven-metadata*.xml"):
        try:
            versions |= {v.text.strip() for v in ET.parse(meta).iter("version")
                         if v.text and _RELEASE.match(v.text.strip())}
        except (OSError, ET.ParseError):
            continue
    if not versions:
        raise SetupError(f"Maven left no maven-metadata.xml listing versions in {folder}")
    return sorted(versions, key=_key, reverse=True)


def _copy(exe: str, version: str, root: Path, log: Callable[[str], None]) -> bool:
    """Copy the kit's classpath at ``version`` into the cache; False when
    Central has no such kit jars (any other failure: SetupError)."""
    root.mkdir(parents=True, exist_ok=True)
    log(f"fetching the Iceberg REST Compatibility Kit {version} with Maven")
    # Into a temporary folder first, then renamed: a cache never holds half a kit.
    with tempfile.TemporaryDirectory(dir=root, prefix=".fetch-") as tmp:
        lib = Path(tmp) / "lib"
        done = _run(exe, [f"{DEPENDENCY}:copy-dependencies", f"-Diceberg.version={version}",
                          "-DincludeScope=runtime", f"-DoutputDirectory={lib}"], tmp)
        if done.returncode != 0:
            if _missing(done.stdout + done.stderr):
                return False
            raise SetupError(f"Maven could not fetch the kit {version}: {_errors(done)}")
        jars = sorted(p.name for p in lib.glob("*.jar"))
        (lib / DONE).write_text("\n".join(jars) + "\n")
        try:
            os.replace(lib, root / version)
        except OSError:  # another process finished the same copy first
            if not (root / version / DONE).exists():
                raise
    return True


def _missing(said: str) -> bool:
    """Maven's words for "Central has no such artifact" (as opposed to
    "could not reach Central"), for one of the Iceberg jars."""
    return "Could not transfer" not in said and any(
        f"{GROUP}:" in line and ("Could not find artifact" in line or "was not found in" in line)
        for line in said.splitlines())


def main() -> int:
    try:
        found = kit()
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if found is None:
        print("note: no Maven and no cached REST Compatibility Kit: its test will skip "
              "(install Maven)", file=sys.stderr)
        return 1
    print(f"REST Compatibility Kit: Iceberg {found.version} ({found.source}) in {found.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
