"""Issue 47's acceptance 1: Nessie's own Spark setup works against Sapwood
unchanged. Plain PySpark 3.5 with Iceberg's NessieCatalog (Nessie's Java
client inside Iceberg 1.12's Spark runtime) and Nessie's Spark SQL
extensions 0.99, configured as Nessie's documentation says with Sapwood's
``/api/v2`` as the URI (tests/nessie/spark_steps.py, in a JVM of its own),
runs Nessie's SQL: branch, namespace, table, inserts, view, merge, log,
reads on main. Then the same table and view load through Sapwood's Iceberg
REST API on main with the rows, and a table made through the REST API
reads (and takes an insert) through NessieCatalog.

The jars come from the local caches only: Iceberg's Spark runtime
(spark/jars.py) and Nessie's extensions (tests/nessie/fetch.py, with Maven
the first time). Without them, Java or pyspark this skips, or fails under
SAPWOOD_REQUIRE_SPARK=1. One Spark start, one module fixture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.fixtures import server_fixture
from tests.http import http_request
from tests.server import Server

REQUIRE = os.environ.get("SAPWOOD_REQUIRE_SPARK") == "1"
ROOT = Path(__file__).resolve().parents[2]

server = server_fixture(prefix="nessie-spark")


def _jars() -> list[str]:
    """Iceberg's Spark runtime and Nessie's extensions, or a skip (a failure
    under SAPWOOD_REQUIRE_SPARK=1) saying why not."""
    from spark.errors import SetupError
    from spark.jars import java, spark_jars
    from tests.nessie import fetch

    try:
        import pyspark  # noqa: F401

        java()
        iceberg = [str(p) for p in spark_jars(lambda _: None).paths]
        nessie = fetch.jars(log=lambda _: None)
    except (SetupError, ImportError) as e:
        why = str(e)
    else:
        if nessie is not None:
            return [*iceberg, str(nessie.spark_extensions)]
        why = "no Maven to fetch Nessie's Spark extensions and none cached"
    if REQUIRE:
        pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but Nessie's Spark setup cannot run: {why}")
    pytest.skip(f"Nessie's Spark setup unavailable: {why}")


@pytest.fixture(scope="module")
def ran(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The REST side's table made first, then every Spark step run once."""
    from spark.session import LOG_CONFIG

    jars = _jars()
    rest = server.catalog("main")
    rest.create_namespace("rest")
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    table = rest.create_table("rest.r", Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "s", StringType(), required=False)))
    table.append(pa.table({"id": pa.array([10, 20], pa.int64()), "s": ["x", "y"]}))
    folder = tmp_path_factory.mktemp("nessie-spark-run")
    settings, results = folder / "settings.json", folder / "results.json"
    settings.write_text(json.dumps({"jars": jars, "uri": f"{server.base}/api/v2",
                                    "warehouse": server.warehouse, "log4j": LOG_CONFIG}))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tests.nessie.spark_steps", str(settings),
                           str(results)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert results.exists(), done.stderr[-4000:]
    out: dict[str, Any] = json.loads(results.read_text())
    out["wall_s"] = time.monotonic() - started
    print(f"Spark with NessieCatalog: {out['wall_s']:.1f} s "
          f"(JVM and session {out['started_s']:.1f} s)")
    return out


def step(ran: dict[str, Any], name: str) -> list[list[Any]]:
    got = ran["steps"][name]
    assert got["ok"], f"{name}: {got.get('error')}"
    return sorted(got["rows"])


def test_nessies_sql_runs_against_sapwood(ran: dict[str, Any], server: Server) -> None:
    failed = {k: v["error"][:600] for k, v in ran["steps"].items() if not v["ok"]}
    assert failed == {}
    assert step(ran, "create branch")[0][:2] == ["Branch", "dev"]
    assert step(ran, "use dev")[0][:2] == ["Branch", "dev"]
    assert ["db"] in step(ran, "show namespaces")
    rows = [[1, "a"], [2, "b"], [3, "c"], [4, "d"]]
    assert step(ran, "table on dev") == rows
    assert step(ran, "view on dev") == rows[1:]
    assert [r[1] for r in step(ran, "show tables")] == ["t"]
    assert [r[1] for r in step(ran, "show views")] == ["v"]
    merged = step(ran, "merge")
    assert merged[0][0] == "main"
    assert step(ran, "table on main") == rows
    assert step(ran, "view on main") == rows[1:]
    assert step(ran, "rest table") == [[10, "x"], [20, "y"]]
    # The log of main: the merge on top of the REST side's commits.
    log = ran["steps"]["log"]["rows"]
    assert log[0][2] == merged[0][1]  # the merge's hash heads main's log
    assert [r[3] for r in log[1:]] == ["update table rest.r", "create table rest.r",
                                       "create namespace rest"]
    # NessieCatalog's commits on dev, with the properties its client sends
    # (allProperties) and the author it names.
    dev = http_request("GET", f"{server.base}/api/v2/trees/dev/history").json()
    metas = [e["commitMeta"] for e in dev["logEntries"]]
    appends = [m for m in metas if m["allProperties"].get("iceberg.operation") == ["append"]]
    assert len(appends) == 2, metas
    assert all(m["allProperties"]["application-type"] == ["iceberg"] for m in appends)
    assert server.server_errors() == []


def test_the_rest_api_serves_what_nessiecatalog_wrote(ran: dict[str, Any],
                                                      server: Server) -> None:
    assert ran["steps"]["merge"]["ok"]
    rest = server.catalog("main")
    t = rest.load_table("db.t")
    assert sorted((r["id"], r["name"]) for r in t.scan().to_arrow().to_pylist()) == [
        (1, "a"), (2, "b"), (3, "c"), (4, "d")]
    # The view NessieCatalog wrote (its metadata gzip-compressed, as Iceberg
    # writes views) loads with its SQL and columns.
    v = rest.load_view("db.v")
    version = v.metadata.versions[-1]
    assert [r.model_dump()["sql"] for r in version.representations] == [
        "SELECT id, name FROM n.db.t WHERE id > 1"]
    assert v.metadata.location.startswith(server.warehouse)
    # What the REST API made, NessieCatalog read and appended to.
    r = rest.load_table("rest.r")
    assert sorted(row["id"] for row in r.scan().to_arrow().to_pylist()) == [10, 20, 30]
    answer = http_request("GET", f"{server.base}/api/v2/trees/main/contents/db.v")
    assert answer.status_code == 200, answer.text
    # Gzip-compressed, as Iceberg writes a view's metadata by default.
    assert answer.json()["content"]["metadataLocation"].endswith(".gz.metadata.json")


def test_nessies_java_client_calls_nessiecatalog_does_not_make(ran: dict[str, Any]) -> None:
    """The same Java client's API beyond what NessieCatalog asks: the default
    branch (``-``), the repository configuration, the namespace API, a full
    log (each PUT with its content), entries by key range, a log until a hash."""
    failed = {k: v["error"][:600] for k, v in ran["java"].items() if not v["ok"]}
    assert failed == {}
    got = {k: v["value"] for k, v in ran["java"].items()}
    assert got["default branch"] == "main"
    assert got["repository config"] == 0
    assert got["namespace"] == "db"
    # Every PUT read (Nessie's model cannot build one without its content).
    assert {"db", "db.t", "db.v", "rest.r"} <= set(got["full log"])
    assert got["entries by key range"] == ["db.t", "db.v"]
    assert got["log until a hash"] == [False, True]
