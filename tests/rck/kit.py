"""Running one class of the Iceberg REST Compatibility Kit against a server,
and reading what it found.

The kit is JUnit 5 tests (iceberg-open-api's ``tests`` jar) run by JUnit's
console launcher, configured as the kit reads it (RCKUtils,
RESTCompatibilityKitSuite): ``CATALOG_*`` environment variables become
catalog properties (``CATALOG_URI`` → ``uri``, ``CATALOG_WAREHOUSE`` →
``warehouse``), and so do the JVM's system properties, where the ``rck.*``
switches are read; ``rck.local=false`` (a JUnit configuration parameter,
read from system properties too) stops it from starting its own server.
Results come from the launcher's XML report, not its console text.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import TEST_JAVA_OPTIONS

PACKAGE = "org.apache.iceberg.rest."
CLASSES = {"catalog": "RESTCompatibilityKitCatalogTests",
           "views": "RESTCompatibilityKitViewCatalogTests"}
SETTINGS = {
    "rck.local": "false",
    # A namespace exists only once created (Sapwood: its parents too).
    "rck.requires-namespace-create": "true",
    # `a.b` is one name element; the REST path separates elements with 0x1F.
    "rck.supports-names-with-dot": "true",
}
# Kit tests Sapwood refuses by design, by method name (every invocation of a
# parameterized one), with why; docs/iceberg-rest.md names each. A listed
# test counts as refused only when it failed with REFUSAL in its message;
# failing otherwise, or passing, fails our test (the list is then wrong).
REFUSAL = "gc.enabled cannot be turned on"
GC_WHY = ("creates its table with gc.enabled=true, which Sapwood refuses: a table's "
          "files are shared by every branch and the catalog's history, so only the "
          "catalog deletes them (docs/operations.md)")
REFUSED = {"testRemoveUnusedSchemas": GC_WHY, "testRemoveUnusedSpec": GC_WHY}
_FAILED_CONTAINERS = re.compile(r"\[\s*(\d+) containers failed\s*\]")


@dataclass(frozen=True)
class Case:
    name: str  # the launcher's, e.g. "testRemoveUnusedSpec(boolean)[1]"
    outcome: str  # "passed", "failed" or "skipped" (disabled, or an assumption aborted it)
    message: str = ""

    @property
    def method(self) -> str:
        return self.name.split("(", 1)[0]

    @property
    def refused(self) -> bool:
        return self.outcome == "failed" and self.method in REFUSED and REFUSAL in self.message


@dataclass(frozen=True)
class Run:
    cases: list[Case]
    wall_s: float
    jvm_cpu_s: float
    output: str  # the launcher's console text (its summary, failures' traces)
    returncode: int

    def count(self, outcome: str) -> int:
        return sum(c.outcome == outcome for c in self.cases)

    def problems(self) -> list[str]:
        """Every way this run falls short, each on one line, naming the kit test."""
        out = []
        failed_containers = [int(n) for n in _FAILED_CONTAINERS.findall(self.output)]
        if self.returncode not in (0, 1) or not self.cases or any(failed_containers):
            out.append(f"the kit did not run through (exit {self.returncode}, "
                       f"{len(self.cases)} tests reported): {self.output[-3000:]}")
        for c in self.cases:
            if c.outcome == "failed" and not c.refused:
                why = "" if c.method not in REFUSED else " (listed as refused, but not for that)"
                out.append(f"{c.name}{why}: {c.message}")
            if c.outcome == "passed" and c.method in REFUSED:
                out.append(f"{c.name} passed but is listed as refused by design "
                           "(tests/rck/kit.py REFUSED, docs/iceberg-rest.md): update both")
        return out


def run(classpath: str, kit_class: str, uri: str, warehouse: str, workdir: Path,
        java: str = "java", timeout: float = 600) -> Run:
    """Run one kit class (a key of CLASSES) against the catalog at ``uri``."""
    reports = workdir / "reports"
    tmp = workdir / "java-tmp"  # the kit's @TempDir folders
    tmp.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
    env.update(CATALOG_URI=uri, CATALOG_WAREHOUSE=warehouse)
    args = [java, *shlex.split(TEST_JAVA_OPTIONS), f"-Djava.io.tmpdir={tmp}",
            # The kit's clients log through slf4j-simple: warnings and worse only.
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            *(f"-D{k}={v}" for k, v in SETTINGS.items()),
            "-cp", classpath, "org.junit.platform.console.ConsoleLauncher", "execute",
            "--disable-banner", "--disable-ansi-colors", "--details=summary",
            "--select-class", PACKAGE + CLASSES[kit_class], "--reports-dir", str(reports)]
    before = os.times()
    started = time.monotonic()
    done = subprocess.run(args, capture_output=True, text=True, check=False,
                          timeout=timeout, env=env, cwd=workdir)
    wall = time.monotonic() - started
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    cases = parse(reports / "TEST-junit-jupiter.xml")
    return Run(cases, wall, cpu, done.stdout + done.stderr, done.returncode)


def parse(report: Path) -> list[Case]:
    """The test cases of a launcher's legacy XML report."""
    if not report.exists():
        return []
    cases = []
    for tc in ET.parse(report).iter("testcase"):
        name = tc.get("name") or "?"
        failed = tc.find("failure")
        if failed is None:
            failed = tc.find("error")
        if failed is not None:
            message = (failed.get("message") or (failed.text or "").split("\n", 1)[0]).strip()
            kind = (failed.get("type") or "").rsplit(".", 1)[-1]
            cases.append(Case(name, "failed", f"{kind}: {_short(message)}"))
        elif tc.find("skipped") is not None:
            cases.append(Case(name, "skipped"))
        else:
            cases.append(Case(name, "passed"))
    return cases


def _short(message: str, limit: int = 600) -> str:
    """A failure's message on one line, without the stack traces AssertJ
    quotes inside it."""
    kept = [line.strip() for line in message.splitlines()
            if line.strip() and not line.strip().startswith(("at ", "..."))]
    text = " ".join(" ".join(kept).split())
    return text if len(text) <= limit else text[:limit] + " …"


def summary(results: list[dict[str, object]]) -> str:
    """The suite's closing line, from what each class's test recorded."""
    parts, refused, wall, cpu = [], Counter[str](), 0.0, 0.0
    version = ""
    for r in sorted(results, key=lambda r: list(CLASSES).index(str(r["class"]))):
        passed, failed = int(str(r["passed"])), int(str(r["failed"]))
        parts.append(f"{r['class']} {passed}/{passed + failed} passed")
        refused.update(str(n).split("(", 1)[0] for n in r["refused"])  # type: ignore[attr-defined]
        wall += float(str(r["wall_s"]))
        cpu += float(str(r["cpu_s"]))
        version = str(r["version"])
    line = f"RCK (Iceberg {version}): " + ", ".join(parts)
    if refused:
        named = ", ".join(f"{m} x{n}" if n > 1 else m for m, n in sorted(refused.items()))
        line += f" ({refused.total()} refused by design, gc.enabled=true: {named})"
    return line + f"; {wall:.0f} s wall, {cpu:.0f} s CPU (kit JVM and server)"
