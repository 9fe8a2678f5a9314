"""Catalog names are the engine's, references are Sapwood's (issue 49): an
engine that says its catalog's name (``warehouse`` beside a base path that
names the ref, as docs/trino/iceberg.properties does) gets it back in
config's prefix; a view written through it records that name as its
``default-catalog`` when it has none, is analysed with that name meaning this
catalog, and every loadView serves each version for the catalog that loads
it: ``default-catalog`` that catalog's name (or none when it did not say),
three-part names in the stored catalog renamed (or unqualified), names in
any other catalog kept. Plain HTTP against a real server, SQLite and
PostgreSQL."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.api.engine_catalogs import SCHEMA, base, create_orders
from tests.fixtures import BACKENDS, server_fixture

server = server_fixture(BACKENDS)


def version(sql: str, dialect: str = "trino", default_catalog: str | None = None,
            version_id: int = 1, schema_id: int = 0) -> dict[str, Any]:
    v: dict[str, Any] = {"version-id": version_id, "timestamp-ms": int(time.time() * 1000),
                         "schema-id": schema_id, "summary": {"engine-name": "trino"},
                         "representations": [{"type": "sql", "sql": sql, "dialect": dialect}],
                         "default-namespace": ["sales"]}
    if default_catalog:
        v["default-catalog"] = default_catalog
    return v


def current(metadata: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in metadata["versions"]
                if v["version-id"] == metadata["current-version-id"])


def load(http: httpx.Client, ref: str, catalog: str | None, name: str) -> dict[str, Any]:
    r = http.get(f"{base(ref, catalog)}/namespaces/sales/views/{name}")
    assert r.status_code == 200, r.text
    return current(r.json()["metadata"])


@pytest.fixture(scope="module")
def orders(server: Any) -> None:
    create_orders(server.base)


def test_config_hands_the_engines_catalog_name_back_in_the_prefix(
        orders: None, http: httpx.Client) -> None:
    r = http.get("/iceberg/main/v1/config", params={"warehouse": "iceberg_x"})
    assert r.status_code == 200, r.text
    assert r.json()["overrides"]["prefix"] == "main%7Ciceberg_x"
    # Without a base path, warehouse is the ref, as before; the ref named
    # again beside its base path is no catalog name.
    assert http.get("/iceberg/v1/config", params={"warehouse": "main"}
                    ).json()["overrides"]["prefix"] == "main"
    assert http.get("/iceberg/main/v1/config", params={"warehouse": "main"}
                    ).json()["overrides"]["prefix"] == "main"
    r = http.get("/iceberg/main/v1/config", params={"warehouse": "s3://bucket/w"})
    assert r.status_code == 400 and "'s3://bucket/w'" in r.json()["error"]["message"], r.text
    r = http.get(f"{base('main', 'bad name')}/namespaces")
    assert r.status_code == 400 and "'bad name'" in r.json()["error"]["message"], r.text


def test_a_view_written_through_a_named_catalog_is_its_own_everywhere(
        orders: None, http: httpx.Client) -> None:
    """Trino's way: its catalog's name in the SQL, no default-catalog."""
    r = http.post(f"{base('main', 'iceberg_dev')}/namespaces/sales/views", json={
        "name": "t3", "schema": SCHEMA,
        "view-version": version("SELECT id FROM iceberg_dev.sales.orders")})
    assert r.status_code == 200, r.text
    # Recorded: the name the SQL's names are relative to; analysed ok.
    stored = http.get("/api/v2/trees/main/views", params={"status": "all", "key": "sales.t3"})
    [view] = stored.json()["views"]
    assert view["status"] == "ok", view
    assert load(http, "main", "iceberg_dev", "t3")["default-catalog"] == "iceberg_dev"
    # Another engine's catalog name for the same ref reads the same tables.
    other = load(http, "main", "lake", "t3")
    assert other["default-catalog"] == "lake"
    assert other["representations"][0]["sql"] == "SELECT id FROM lake.sales.orders"
    # A client that did not say its name (Spark's way): no catalog at all,
    # so Iceberg's Spark resolves in the catalog it loaded the view from.
    plain = load(http, "main", None, "t3")
    assert "default-catalog" not in plain
    assert plain["representations"][0]["sql"] == "SELECT id FROM sales.orders"


def test_a_replace_through_a_named_catalog_is_recorded_too(
        orders: None, http: httpx.Client) -> None:
    at = f"{base('main', 'iceberg')}/namespaces/sales/views/r"
    r = http.post(f"{base('main', 'iceberg')}/namespaces/sales/views", json={
        "name": "r", "schema": SCHEMA, "view-version": version("SELECT id FROM orders")})
    assert r.status_code == 200, r.text
    r = http.post(at, json={
        "requirements": [{"type": "assert-view-uuid", "uuid": r.json()["metadata"]["view-uuid"]}],
        "updates": [{"action": "add-view-version",
                     "view-version": version("SELECT id + 1 AS id FROM iceberg.sales.orders",
                                             version_id=-1)},
                    {"action": "set-current-view-version", "view-version-id": -1}]})
    assert r.status_code == 200, r.text
    assert current(r.json()["metadata"])["default-catalog"] == "iceberg"
    served = load(http, "main", "iceberg_dev", "r")
    assert served["representations"][0]["sql"] == (
        "SELECT id + 1 AS id FROM iceberg_dev.sales.orders")


def test_names_in_another_catalog_are_kept_and_a_stamped_view_is_served_unstamped(
        orders: None, http: httpx.Client) -> None:
    """A view whose default-catalog an engine stamped (``iceberg``), written
    by a client that did not say its catalog: a reader that does not say its
    own gets it as written (the REST spec's load returns what was sent; the
    compatibility kit checks it); a reader that says its own gets its name,
    and a name in another catalog stays as written (an explicit other
    catalog)."""
    sql = ("SELECT a.id FROM iceberg.sales.orders AS a JOIN elsewhere.sales.orders AS b "
           "ON a.id = b.id")
    r = http.post(f"{base('main')}/namespaces/sales/views", json={
        "name": "mixed", "schema": SCHEMA, "view-version": version(
            sql, default_catalog="iceberg")})
    assert r.status_code == 200, r.text
    plain = load(http, "main", None, "mixed")
    assert plain["default-catalog"] == "iceberg"
    assert plain["representations"][0]["sql"] == sql
    assert "sapwood.engine-catalog" not in plain["summary"]
    named = load(http, "main", "lake", "mixed")
    assert named["default-catalog"] == "lake"
    assert named["representations"][0]["sql"].startswith("SELECT a.id FROM lake.sales.orders")


def test_a_clients_own_engine_catalog_mark_is_not_taken(orders: None,
                                                       http: httpx.Client) -> None:
    """``sapwood.engine-catalog`` is the server's record of a name an engine
    gave in config; a client that writes it in its summary (to have its own
    ``default-catalog`` dropped for other readers) has it left out, and its
    ``default-catalog`` comes back as written."""
    v = version("SELECT id FROM iceberg.sales.orders", default_catalog="iceberg")
    v["summary"] = {**v.get("summary", {}), "sapwood.engine-catalog": "iceberg"}
    r = http.post(f"{base('main')}/namespaces/sales/views", json={
        "name": "forged", "schema": SCHEMA, "view-version": v})
    assert r.status_code == 200, r.text
    plain = load(http, "main", None, "forged")
    assert "sapwood.engine-catalog" not in plain["summary"]
    assert plain["default-catalog"] == "iceberg"
    assert plain["representations"][0]["sql"] == "SELECT id FROM iceberg.sales.orders"
