"""The Apache Iceberg REST Compatibility Kit, run against a real server.

Each kit class (tests/rck/kit.py: CLASSES) runs against a fresh ``sapwood
serve`` of its own: the kit's ``@BeforeAll`` refuses a catalog that already
holds its namespaces ``ns`` or ``newdb``. The server allows external
locations, because the catalog tests ask for tables under ``file:/tmp``
(CatalogTests' BASE_TABLE_LOCATION, a constant): the metadata files it
writes there (about 100 KB a run) are left, since another run on the
machine may be using the same folders. The kit's jars come from Maven
Central through tests/rck/fetch.py (tests/run.sh fetches them first);
without them or a JDK this skips, or fails under SAPWOOD_REQUIRE_SPARK=1 (CI).

Every kit test must pass, except those refused by design (kit.REFUSED,
named in docs/iceberg-rest.md); the failure lists every other failing kit
test with its message. The counts go into the suite's summary (the
``rck`` property, printed by tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures import database_url
from tests.processes import cpu_seconds
from tests.rck import fetch
from tests.rck.kit import CLASSES, run
from tests.server import serving

REQUIRE = os.environ.get("SAPWOOD_REQUIRE_SPARK") == "1"


@pytest.fixture(scope="module")
def kit_jars() -> fetch.Kit:
    from spark.errors import SetupError

    why = ""
    found = None
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        why = "no Java runtime (install a JDK 17)"
    else:
        try:
            found = fetch.kit(log=lambda _: None)
        except SetupError as e:
            why = str(e)
        if found is None and not why:
            why = "no Maven to fetch the kit's jars and none cached (install Maven)"
    if found is None:
        if REQUIRE:
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but the REST Compatibility Kit cannot run: {why}")
        pytest.skip(f"REST Compatibility Kit unavailable: {why}")
    return found


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


@pytest.mark.parametrize("kit_class", list(CLASSES))
def test_the_compatibility_kit_passes(kit_class: str, kit_jars: fetch.Kit, tmp_path: Path,
                                      request: pytest.FixtureRequest,
                                      record_property: Callable[[str, object], None]) -> None:
    url = database_url(request, "sqlite", tmp_path / "catalog")
    env = {"SAPWOOD_ALLOW_EXTERNAL_LOCATIONS": "1"}
    with serving(url, tmp_path / "server", extra_env=env) as srv:
        assert srv.proc is not None
        pid = srv.proc.pid
        server_before = cpu_seconds(pid) or 0.0
        result = run(kit_jars.classpath, kit_class, srv.uri(), "main", tmp_path / "kit",
                     java=java())
        server_cpu = (cpu_seconds(pid) or server_before) - server_before
    refused = [c.name for c in result.cases if c.refused]
    record_property("rck", json.dumps({
        "class": kit_class, "version": kit_jars.version,
        "passed": result.count("passed"), "failed": result.count("failed"),
        "skipped": result.count("skipped"), "refused": refused,
        "wall_s": round(result.wall_s, 1), "cpu_s": round(result.jvm_cpu_s + server_cpu, 1)}))
    problems = result.problems()
    assert not problems, (f"{len(problems)} kit tests of {kit_class} failed "
                          f"(Iceberg {kit_jars.version}):\n" + "\n".join(problems))
