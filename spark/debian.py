"""HttpClient 5 and HttpCore 5 jars from Debian's packages, without touching /etc.

Iceberg 1.10's REST client needs HttpClient >= 5.4; Debian's stable suites
carry 5.2, its unstable suite (``sid``) a recent one. ``apt-get download``
with a private configuration (own sources list, lists, cache and status under
the cache folder) fetches the two packages from the mirror the machine already
uses; the mirror is read from the system's apt sources at run time rather than
written into the project.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from spark.errors import SetupError

PACKAGES = ("libhttpclient5-java", "libhttpcore5-java")
JARS = ("httpclient5", "httpcore5", "httpcore5-h2")
MIN_VERSION = (5, 4)
SUITE = "sid"


def mirror(etc: Path = Path("/etc/apt")) -> str:
    """The URI of the machine's main (non-security) Debian source."""
    for path in sorted((etc / "sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.+)$", stanza, re.M))
            uris = fields.get("URIs", "").split()
            suites = fields.get("Suites", "").split()
            if "deb" in fields.get("Types", "").split() and uris and not any(
                    s.endswith("-security") for s in suites) and "security" not in uris[0]:
                return str(uris[0])
    legacy = etc / "sources.list"
    if legacy.exists():
        for line in legacy.read_text().splitlines():
            parts = line.split()
            uris = [p for p in parts[1:] if "://" in p]
            if parts[:1] == ["deb"] and uris and "security" not in line:
                return str(uris[0])
    raise SetupError(f"no Debian package source found in {etc}; HttpClient 5 comes from "
                     "Debian's packages (or set SAPWOOD_ICEBERG_SPARK_JARS to an official "
                     "iceberg-spark-runtime jar)")


def _apt(work: Path, *args: str) -> None:
    options = [f"-oDir::Etc::SourceList={work / 'sources.list'}",
               "-oDir::Etc::SourceParts=/dev/null", f"-oDir::State::Lists={work / 'lists'}",
               f"-oDir::Cache={work / 'cache'}", f"-oDir::State::status={work / 'status'}",
               # Only the package index: not the AppStream metadata a desktop's
               # apt.conf.d adds (9 MB more from sid, a third of the update's
               # CPU), nor translations.
               "-oAcquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
               "-oAcquire::Languages=none", "-qq"]
    if os.geteuid() == 0:
        options.append("-oAPT::Sandbox::User=root")  # the _apt user cannot read our folder
    done = subprocess.run(["apt-get", *options, *args], cwd=work, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SetupError(f"apt-get {args[0]} failed: {(done.stderr or done.stdout).strip()}")


def _version(jar: Path) -> tuple[int, ...]:
    found = re.search(r"-(\d+(?:\.\d+)+)\.jar$", jar.name)
    return tuple(int(p) for p in found.group(1).split(".")) if found else ()


def _unpacked(folder: Path) -> list[Path]:
    return [j for j in sorted((folder / "usr/share/java").glob("*.jar"))
            if not j.is_symlink() and re.sub(r"-[0-9.]+\.jar$", "", j.name) in JARS]


def fetch_httpclient5(folder: Path, log: Callable[[str], None] = print) -> list[Path]:
    """The HttpClient 5 / HttpCore 5 jars (client, core, h2), downloading once."""
    if len(jars := _unpacked(folder)) == len(JARS):
        return _recent(jars)
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise SetupError(f"'{tool}' not found: HttpClient 5 >= 5.4 is taken from Debian's "
                             "packages. On another system, set SAPWOOD_ICEBERG_SPARK_JARS to an "
                             "official iceberg-spark-runtime-3.5_2.12 jar")
    work = folder / "apt"
    for sub in ("lists/partial", "cache/archives/partial"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    (work / "status").touch()
    source = mirror()
    (work / "sources.list").write_text(f"deb {source} {SUITE} main\n")
    log(f"downloading {', '.join(PACKAGES)} from {source} ({SUITE})")
    _apt(work, "update")
    _apt(work, "download", *PACKAGES)
    for deb in sorted(work.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(folder)], check=True)
    jars = _unpacked(folder)
    if len(jars) != len(JARS):
        raise SetupError(f"Debian's {SUITE} packages did not hold {', '.join(JARS)}")
    shutil.rmtree(work, ignore_errors=True)
    return _recent(jars)


def _recent(jars: list[Path]) -> list[Path]:
    old = [j.name for j in jars if _version(j)[:2] < MIN_VERSION]
    if old:
        raise SetupError(f"Iceberg needs HttpClient 5 >= 5.4; Debian {SUITE} has {old}")
    return jars
