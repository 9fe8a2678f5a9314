"""Representations served, not stored (issue 49, core/sql/derived.py): a
view version with Spark SQL and no Trino or DuckDB SQL is served, to a
catalog that named itself (docs/trino/iceberg.properties: Trino's), with
both derived by sqlglot, its catalog names as that catalog reads them, and
``replace.drop-dialect.allowed=true`` beside them; any other client (Spark,
PyIceberg, the REST Compatibility Kit) is served the representations as
written; the stored metadata (the metadata file the versioning API names)
never holds them; an engine's own representation wins; SQL sqlglot cannot
read is served without them, saying why. Plain HTTP against a real server,
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from tests.api.engine_catalogs import SCHEMA, base, create_orders
from tests.fixtures import BACKENDS, server_fixture

server = server_fixture(BACKENDS)
ALLOWED = "replace.drop-dialect.allowed"


def spark_version(sql: str, version_id: int = 1, default_catalog: str | None = None,
                  **more: str) -> dict[str, Any]:
    """As Spark 3.5 + Iceberg sends it: Spark SQL only (``more``: other
    dialects an engine wrote itself)."""
    v: dict[str, Any] = {
        "version-id": version_id, "timestamp-ms": int(time.time() * 1000), "schema-id": 0,
        "summary": {"engine-name": "spark", "engine-version": "3.5.6"},
        "representations": [{"type": "sql", "sql": s, "dialect": d}
                            for d, s in {"spark": sql, **more}.items()],
        "default-namespace": ["sales"]}
    if default_catalog:
        v["default-catalog"] = default_catalog
    return v


def create(http: httpx.Client, name: str, version: dict[str, Any]) -> dict[str, Any]:
    r = http.post(f"{base('main')}/namespaces/sales/views",
                  json={"name": name, "schema": SCHEMA, "view-version": version})
    assert r.status_code == 200, r.text
    return r.json()["metadata"]  # type: ignore[no-any-return]


def load(http: httpx.Client, name: str, catalog: str | None = None) -> httpx.Response:
    r = http.get(f"{base('main', catalog)}/namespaces/sales/views/{name}")
    assert r.status_code == 200, r.text
    return r


def current(metadata: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in metadata["versions"]
                if v["version-id"] == metadata["current-version-id"])


def sql_of(version: dict[str, Any]) -> dict[str, str]:
    return {r["dialect"]: r["sql"] for r in version["representations"]}


def stored(http: httpx.Client, name: str) -> dict[str, Any]:
    """The metadata file the versioning API names for the view on main."""
    r = http.get(f"/api/v2/trees/main/contents/sales.{name}")
    assert r.status_code == 200, r.text
    location = r.json()["content"]["metadataLocation"]
    return json.loads(Path(urlparse(location).path).read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def orders(server: Any) -> None:
    create_orders(server.base)


def test_a_spark_view_is_served_with_derived_dialects_that_are_never_stored(
        orders: None, http: httpx.Client) -> None:
    r = http.post(f"{base('main')}/namespaces/sales/views", json={
        "name": "sv", "schema": SCHEMA,
        "view-version": spark_version("SELECT id FROM orders WHERE id > 0")})
    assert r.status_code == 200, r.text
    created = r.json()["metadata"]
    # The create answers with the view as a load serves it: same body, same
    # ETag; to a catalog that did not name itself, as it was written.
    loaded = load(http, "sv")
    assert (loaded.content, loaded.headers["etag"]) == (r.content, r.headers["etag"])
    assert sql_of(current(loaded.json()["metadata"])) == {
        "spark": "SELECT id FROM orders WHERE id > 0"}
    assert ALLOWED not in loaded.json()["metadata"]["properties"]
    assert "sapwood.derived-representations" not in current(loaded.json()["metadata"])[
        "summary"]
    # To a catalog that named itself (as Trino's does), with the dialects derived.
    served = load(http, "sv", "lake").json()["metadata"]
    assert sql_of(current(served)) == {"spark": "SELECT id FROM orders WHERE id > 0",
                                       "trino": "SELECT id FROM orders WHERE id > 0",
                                       "duckdb": "SELECT id FROM orders WHERE id > 0"}
    assert current(served)["summary"]["sapwood.derived-representations"].startswith(
        "trino, duckdb derived from spark by sqlglot ")
    assert served["properties"][ALLOWED] == "true"
    on_disk = stored(http, "sv")
    assert set(sql_of(current(on_disk))) == {"spark"}
    assert ALLOWED not in on_disk["properties"]
    # As Spark replaces it (Spark SQL only, after loading the served view):
    # nothing is lost of what was stored, so the server takes it.
    r = http.post(f"{base('main')}/namespaces/sales/views/sv", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": created["view-uuid"]}],
        "updates": [{"action": "add-view-version",
                     "view-version": spark_version("SELECT id + 1 AS id FROM orders", -1)},
                    {"action": "set-current-view-version", "view-version-id": -1}]})
    assert r.status_code == 200, r.text
    assert sql_of(current(load(http, "sv", "lake").json()["metadata"]))["trino"] == (
        "SELECT id + 1 AS id FROM orders")
    assert set(sql_of(current(stored(http, "sv")))) == {"spark"}


def test_derived_sql_names_the_loading_catalog_and_the_etag_follows_what_is_served(
        orders: None, http: httpx.Client) -> None:
    create(http, "named", spark_version(
        "SELECT `id` FROM sw.sales.orders", default_catalog="sw"))
    plain = load(http, "named")
    lake = load(http, "named", "lake")
    assert set(sql_of(current(plain.json()["metadata"]))) == {"spark"}
    assert sql_of(current(lake.json()["metadata"]))["trino"] == (
        'SELECT "id" FROM lake.sales.orders')
    assert sql_of(current(load(http, "named", "sw").json()["metadata"]))["trino"] == (
        'SELECT "id" FROM sw.sales.orders')
    assert plain.headers["etag"] != lake.headers["etag"]
    again = http.get(f"{base('main')}/namespaces/sales/views/named",
                     headers={"If-None-Match": plain.headers["etag"]})
    assert again.status_code == 304
    assert load(http, "named").content == plain.content


def test_an_engines_own_representation_wins_and_underivable_sql_says_why(
        orders: None, http: httpx.Client) -> None:
    create(http, "own", spark_version("SELECT id FROM orders",
                                      trino="SELECT id AS id FROM sales.orders"))
    served = current(load(http, "own", "lake").json()["metadata"])
    assert sql_of(served) == {"spark": "SELECT id FROM orders",
                              "trino": "SELECT id AS id FROM sales.orders",
                              "duckdb": "SELECT id FROM orders"}
    create(http, "broken", spark_version("SELECT id FROM orders WHERE"))
    metadata = load(http, "broken", "lake").json()["metadata"]
    served = current(metadata)
    assert set(sql_of(served)) == {"spark"}
    assert served["summary"]["sapwood.underived-dialects"].startswith(
        "trino: cannot parse the spark SQL: "), served["summary"]
    assert "duckdb: cannot parse the spark SQL" in served["summary"][
        "sapwood.underived-dialects"]
    assert ALLOWED not in metadata["properties"]


def test_a_served_version_sent_back_stores_only_what_the_engine_wrote(
        orders: None, http: httpx.Client) -> None:
    """A client that copies the loaded version and adds its own DuckDB SQL:
    the derived Trino and DuckDB copies and the marker are not stored."""
    created = create(http, "copied", spark_version("SELECT id FROM orders"))
    served = current(load(http, "copied", "lake").json()["metadata"])
    mine = {"type": "sql", "sql": "SELECT id FROM sales.orders", "dialect": "duckdb"}
    r = http.post(f"{base('main')}/namespaces/sales/views/copied", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": created["view-uuid"]}],
        "updates": [{"action": "add-view-version", "view-version": {
            **served, "version-id": 2, "representations": [*served["representations"], mine]}},
                    {"action": "set-current-view-version", "view-version-id": -1}]})
    assert r.status_code == 200, r.text
    on_disk = current(stored(http, "copied"))
    assert sql_of(on_disk) == {"spark": "SELECT id FROM orders",
                               "duckdb": "SELECT id FROM sales.orders"}
    assert "sapwood.derived-representations" not in on_disk["summary"]
    assert sql_of(current(load(http, "copied", "lake").json()["metadata"]))["trino"] == (
        "SELECT id FROM orders")
