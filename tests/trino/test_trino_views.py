"""A real Trino 476 (tests/trino/fetch.py) beside a real Sapwood server: one
of each per module, Trino's catalogs made from docs/trino/iceberg.properties
(``iceberg`` on main, ``iceberg_dev`` on branch dev, ``iceberg_v1`` on a
branch named ``v1``, ``iceberg_then`` on main pinned at an instant). Views
are written the way Spark writes them (plain HTTP: Spark SQL, no
``default-catalog``; Spark SQL alone, Trino's derived as it is served) and by
Trino itself (issue 49).

Skips without Maven, a cached Trino or a Java 24+, or fails under
SAPWOOD_REQUIRE_SPARK=1 (CI), as the Spark and Nessie tests do.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
import pyarrow as pa
import pytest

from tests.fixtures import server_fixture
from tests.http import http_client
from tests.server import Server
from tests.trino.server import TrinoError, TrinoServer, environment_ready, trino_serving

REQUIRE = os.environ.get("SAPWOOD_REQUIRE_SPARK") == "1"
server = server_fixture(prefix="trino-server")
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "long"},
    {"id": 2, "name": "src", "required": False, "type": "string"}]}


def branch(http: httpx.Client, name: str) -> None:
    head = http.get("/api/v2/trees/main").json()["reference"]["hash"]
    r = http.post("/api/v2/trees", params={"name": name, "type": "BRANCH"},
                  json={"type": "BRANCH", "name": "main", "hash": head})
    assert r.status_code == 200, r.text


def view_version(representations: dict[str, str], default_catalog: str | None = None,
                 version_id: int = 1, schema_id: int = 0) -> dict[str, Any]:
    """A view version as Spark 3.5 + Iceberg writes it when the view's
    catalog is the session's current one: no ``default-catalog``."""
    version: dict[str, Any] = {
        "version-id": version_id, "timestamp-ms": int(time.time() * 1000),
        "schema-id": schema_id,
        "summary": {"engine-name": "spark", "engine-version": "3.5.6"},
        "representations": [{"type": "sql", "sql": sql, "dialect": dialect}
                            for dialect, sql in representations.items()],
        "default-namespace": ["sales"]}
    if default_catalog is not None:
        version["default-catalog"] = default_catalog
    return version


def create_view(http: httpx.Client, ref: str, name: str, representations: dict[str, str],
                default_catalog: str | None = None) -> dict[str, Any]:
    r = http.post(f"/iceberg/{quote(ref, safe='')}/v1/namespaces/sales/views",
                  json={"name": name, "schema": SCHEMA, "properties": {},
                        "view-version": view_version(representations, default_catalog)})
    assert r.status_code == 200, r.text
    return r.json()["metadata"]  # type: ignore[no-any-return]


def replace_view(http: httpx.Client, ref: str, name: str, metadata: dict[str, Any],
                 representations: dict[str, str]) -> None:
    r = http.post(f"/iceberg/{quote(ref, safe='')}/v1/namespaces/sales/views/{name}", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": metadata["view-uuid"]}],
        "updates": [{"action": "add-schema", "schema": {**SCHEMA, "schema-id": -1}},
                    {"action": "add-view-version",
                     "view-version": view_version(representations, version_id=-1,
                                                  schema_id=-1)},
                    {"action": "set-current-view-version", "view-version-id": -1}]})
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def world(server: Server) -> str:
    """sales.orders with a row on main and one more on dev (v1 is main), a
    view replaced on main after an instant; that instant (for the pinned
    catalog)."""
    main = server.catalog("main")
    main.create_namespace("sales")
    main.create_table("sales.orders", pa.schema([("id", pa.int64()), ("src", pa.string())])
                      ).append(pa.table({"id": [1], "src": ["main"]}))
    with http_client(base_url=server.base, timeout=30) as http:
        branch(http, "v1")  # main's rows
        branch(http, "dev")
        server.catalog("dev").load_table("sales.orders").append(
            pa.table({"id": [2], "src": ["dev"]}))
        old = create_view(http, "main", "replaced", {
            "spark": "SELECT id, 'old' AS src FROM orders",
            "trino": "SELECT id, 'old' AS src FROM orders"})
        # Spark SQL alone, as Spark writes it: Trino's is derived when served.
        old_spark = create_view(http, "main", "replaced_in_spark", {
            "spark": "SELECT id, concat('old', '') AS src FROM orders"})
        time.sleep(0.01)
        instant = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        time.sleep(0.01)
        replace_view(http, "main", "replaced", old, {
            "spark": "SELECT id, 'new' AS src FROM orders",
            "trino": "SELECT id, 'new' AS src FROM orders"})
        replace_view(http, "main", "replaced_in_spark", old_spark, {
            "spark": "SELECT id, concat('new', '') AS src FROM orders"})
    return instant


@pytest.fixture(scope="module")
def trino(server: Server, world: str, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[TrinoServer]:
    ready = environment_ready()
    if isinstance(ready, str):
        if REQUIRE:
            pytest.fail(f"SAPWOOD_REQUIRE_SPARK=1 but Trino cannot run: {ready}")
        pytest.skip(f"Trino unavailable: {ready}")
    catalogs = {"iceberg": server.uri("main"), "iceberg_dev": server.uri("dev"),
                "iceberg_v1": server.uri("v1"), "iceberg_then": server.uri(f"main*{world}")}
    with trino_serving(*ready, tmp_path_factory.mktemp("trino"), catalogs) as t:
        print(f"Trino started in {t.started_in:.1f} s, {t.cpu_seconds():.1f} s CPU")
        yield t
        print(f"Trino used {t.cpu_seconds():.1f} s CPU in all")


def rows(trino: TrinoServer, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in trino.query(sql))


MAIN = [(1, "main")]
DEV = [(1, "main"), (2, "dev")]


def test_each_ref_catalog_reads_its_refs_tables(trino: TrinoServer) -> None:
    """A branch named v1 serves as a base path too (defect 4)."""
    assert rows(trino, "SELECT id, src FROM iceberg.sales.orders") == MAIN
    assert rows(trino, "SELECT id, src FROM iceberg_dev.sales.orders") == DEV
    assert rows(trino, "SELECT id, src FROM iceberg_v1.sales.orders") == MAIN


def test_a_view_made_the_spark_way_reads_in_trino_with_its_refs_rows(
        trino: TrinoServer, http: httpx.Client) -> None:
    """No default-catalog (Spark writes none): each catalog reads the view
    at its own ref (defect 1, with a Trino representation beside Spark's)."""
    for ref in ("main", "dev"):
        create_view(http, ref, "spark_way", {"spark": "SELECT id, src FROM orders",
                                             "trino": "SELECT id, src FROM orders"})
    assert rows(trino, "SELECT id, src FROM iceberg.sales.spark_way") == MAIN
    assert rows(trino, "SELECT id, src FROM iceberg_dev.sales.spark_way") == DEV


def test_a_branch_view_naming_another_catalog_reads_its_own_ref(
        trino: TrinoServer, http: httpx.Client) -> None:
    """A view on dev whose default-catalog is ``iceberg`` (what an engine
    whose catalog has that name stamps), its names bare or three-part, never
    answers with main's rows through iceberg_dev (defect 2)."""
    create_view(http, "dev", "stamped", {"trino": "SELECT id, src FROM orders"}, "iceberg")
    create_view(http, "dev", "stamped3", {"trino": "SELECT id, src FROM iceberg.sales.orders"},
                "iceberg")
    assert rows(trino, "SELECT id, src FROM iceberg_dev.sales.stamped") == DEV
    assert rows(trino, "SELECT id, src FROM iceberg_dev.sales.stamped3") == DEV


def test_a_trino_view_on_a_branch_is_analysed_ok_and_reads_its_ref_anywhere(
        trino: TrinoServer, http: httpx.Client) -> None:
    """Trino writes its catalog's name into the SQL and no default-catalog:
    Sapwood knows that name means this catalog (defect 3's 'does not
    exist'), and a reader that does not name its catalog (Spark's way) gets
    the view with its own ref's names."""
    trino.query("CREATE VIEW iceberg_dev.sales.by_trino AS "
                "SELECT id, src FROM iceberg_dev.sales.orders")
    assert rows(trino, "SELECT id, src FROM iceberg_dev.sales.by_trino") == DEV
    r = http.get("/api/v2/trees/dev/views", params={"status": "all", "key": "sales.by_trino"})
    assert r.status_code == 200, r.text
    [view] = r.json()["views"]
    assert view["status"] == "ok", view
    loaded = http.get("/iceberg/dev/v1/dev/namespaces/sales/views/by_trino").json()["metadata"]
    [current] = [v for v in loaded["versions"]
                 if v["version-id"] == loaded["current-version-id"]]
    assert "default-catalog" not in current, current
    assert [r["sql"] for r in current["representations"]] == ["SELECT id, src FROM sales.orders"]


def test_a_catalog_pinned_at_an_instant_reads_the_view_as_it_was(trino: TrinoServer) -> None:
    """Trino ignores FOR TIMESTAMP AS OF on a view: a catalog pinned at
    ``main*<instant>`` reads the definition of then (acceptance 2)."""
    assert rows(trino, "SELECT src FROM iceberg.sales.replaced") == [("new",)]
    assert rows(trino, "SELECT src FROM iceberg_then.sales.replaced") == [("old",)]
    with pytest.raises(TrinoError):
        trino.query("CREATE VIEW iceberg_then.sales.nope AS SELECT 1 AS x")


def test_a_view_with_spark_sql_alone_reads_in_trino_with_its_refs_rows(
        trino: TrinoServer, http: httpx.Client) -> None:
    """Spark SQL only, no default-catalog (Spark's CREATE VIEW): Trino's SQL
    is derived by sqlglot as the view is served (core/sql/derived.py), and
    each catalog reads the view at its own ref (acceptance 1)."""
    for ref in ("main", "dev"):
        create_view(http, ref, "spark_only",
                    {"spark": "SELECT id, `src` FROM orders WHERE id IS NOT NULL"})
    assert rows(trino, "SELECT id, src FROM iceberg.sales.spark_only") == MAIN
    assert rows(trino, "SELECT id, src FROM iceberg_dev.sales.spark_only") == DEV


def test_a_view_replaced_in_spark_reads_anew_in_trino_and_as_it_was_when_pinned(
        trino: TrinoServer) -> None:
    """Replaced with new Spark SQL (as Spark sends a replace): Trino reads
    the new definition, no manual step; a catalog pinned before the replace
    reads the old one (acceptance 2)."""
    assert rows(trino, "SELECT id, src FROM iceberg.sales.replaced_in_spark") == [(1, "new")]
    assert rows(trino, "SELECT id, src FROM iceberg_then.sales.replaced_in_spark") == [
        (1, "old")]
