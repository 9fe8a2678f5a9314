"""PyIceberg's RestCatalog against a real ``sapwood serve`` (acceptance 1):
on SQLite and PostgreSQL with a local warehouse, and with the warehouse on
object storage (a local S3-compatible server): the same tests, parametrised."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
)
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from tests.fixtures import WITH_S3, server_fixture

server = server_fixture(WITH_S3)


SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "name", StringType(), required=False))


def version(sql: str, dialect: str = "spark") -> ViewVersion:
    return ViewVersion(version_id=1, schema_id=0, timestamp_ms=int(time.time() * 1000),
                       summary={"engine-name": "pyiceberg"}, default_namespace=["x"],
                       representations=[SQLViewRepresentation(type="sql", sql=sql,
                                                              dialect=dialect)])


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": [f"n{i}" for i in range(start, start + n)]})


def test_namespaces(server) -> None:
    cat = server.catalog()
    cat.create_namespace("pi_ns", {"owner": "ana"})
    cat.create_namespace(("pi_ns", "inner"))
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace("pi_ns")
    assert ("pi_ns",) in cat.list_namespaces()
    assert cat.list_namespaces("pi_ns") == [("pi_ns", "inner")]
    assert cat.load_namespace_properties("pi_ns") == {"owner": "ana"}
    summary = cat.update_namespace_properties("pi_ns", removals={"owner", "nope"},
                                              updates={"team": "bi"})
    assert (summary.updated, summary.removed, summary.missing) == (["team"], ["owner"], ["nope"])
    assert cat.load_namespace_properties("pi_ns") == {"team": "bi"}
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace("pi_ns")
    cat.drop_namespace(("pi_ns", "inner"))
    cat.drop_namespace("pi_ns")
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties("pi_ns")
    assert cat.namespace_exists("pi_ns") is False


def test_table_append_scan_schema_update(server, ns: str) -> None:
    cat = server.catalog()
    t = cat.create_table(f"{ns}.events", SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table(f"{ns}.events", SCHEMA)
    t.append(rows(3))
    t.append(rows(2, start=3))
    loaded = cat.load_table(f"{ns}.events")
    assert sorted(loaded.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3, 4]
    assert len(loaded.metadata.snapshots) == 2
    before = loaded.metadata_location
    with loaded.update_schema() as u:
        u.add_column("score", LongType())
    again = cat.load_table(f"{ns}.events")
    assert [f.name for f in again.schema().fields] == ["id", "name", "score"]
    assert again.metadata_location != before
    # Every commit wrote a new, numbered metadata file.
    assert again.metadata_location.split("/")[-1].startswith("00003-")
    assert cat.table_exists(f"{ns}.events")
    assert cat.list_tables(ns) == [(ns, "events")]


def test_views_create_list_load_exists_drop(server, ns: str) -> None:
    cat = server.catalog()
    cat.create_table(f"{ns}.base", SCHEMA)
    cat.create_view(f"{ns}.v", SCHEMA, version(f"SELECT * FROM {ns}.base"))
    view = cat.load_view(f"{ns}.v")
    current = view.metadata.current_version_id
    sql = next(v for v in view.metadata.versions if v.version_id == current)
    assert sql.representations[0].root.sql == f"SELECT * FROM {ns}.base"
    assert cat.list_views(ns) == [(ns, "v")]
    assert cat.view_exists(f"{ns}.v") and not cat.view_exists(f"{ns}.base")
    with pytest.raises(NoSuchViewError):
        cat.load_view(f"{ns}.base")  # a table is not a view
    with pytest.raises(NoSuchTableError):
        cat.load_table(f"{ns}.v")  # and a view is not a table
    cat.drop_view(f"{ns}.v")
    assert not cat.view_exists(f"{ns}.v")
    assert cat.list_tables(ns) == [(ns, "base")]


def test_list_paging(server, http, ns: str) -> None:
    cat = server.catalog()
    for i in range(7):
        cat.create_table(f"{ns}.t{i}", SCHEMA)
    seen, token = [], ""
    for _ in range(10):
        r = http.get(f"/iceberg/v1/namespaces/{ns}/tables",
                     params={"pageToken": token, "pageSize": 3})
        assert r.status_code == 200, r.text
        body = r.json()
        assert len(body["identifiers"]) <= 3
        seen += [i["name"] for i in body["identifiers"]]
        token = body["next-page-token"]
        if token is None:
            break
    assert seen == [f"t{i}" for i in range(7)]
    assert len(cat.list_tables(ns)) == 7  # PyIceberg sends no token: everything at once


def test_rename_table_and_view(server, http, ns: str) -> None:
    cat = server.catalog()
    cat.create_namespace(f"{ns}_other")
    t = cat.create_table(f"{ns}.a", SCHEMA)
    t.append(rows(2))
    cat.rename_table(f"{ns}.a", f"{ns}.b")
    assert not cat.table_exists(f"{ns}.a")
    assert cat.load_table(f"{ns}.b").scan().to_arrow().num_rows == 2
    cat.create_view(f"{ns}.v", SCHEMA, version("SELECT 1"))
    # PyIceberg has no rename_view: the route, across namespaces.
    r = http.post("/iceberg/v1/views/rename", json={
        "source": {"namespace": [ns], "name": "v"},
        "destination": {"namespace": [f"{ns}_other"], "name": "w"}})
    assert r.status_code == 204, r.text
    assert cat.view_exists(f"{ns}_other.w") and not cat.view_exists(f"{ns}.v")


def test_branch_dev_leaves_main_unchanged(server, store, ns: str) -> None:
    store.create_reference(f"dev_{ns}", source="main")
    main, dev = server.catalog(), server.catalog(f"dev_{ns}")
    main.create_table(f"{ns}.shared", SCHEMA).append(rows(1))
    # dev was branched before: it has the namespace but not the table.
    assert dev.list_namespaces() and not dev.table_exists(f"{ns}.shared")
    store.assign_reference(f"dev_{ns}", store.get_reference(f"dev_{ns}").hash, "main")
    t = dev.load_table(f"{ns}.shared")
    t.append(rows(4, start=1))
    dev.create_table(f"{ns}.only_dev", SCHEMA)
    dev.create_view(f"{ns}.dev_view", SCHEMA, version("SELECT 2"))
    assert dev.load_table(f"{ns}.shared").scan().to_arrow().num_rows == 5
    assert main.load_table(f"{ns}.shared").scan().to_arrow().num_rows == 1
    assert not main.table_exists(f"{ns}.only_dev")
    assert not main.view_exists(f"{ns}.dev_view")
    assert main.list_tables(ns) == [(ns, "shared")]


def test_reads_at_hash_and_instant(server, store, ns: str) -> None:
    cat = server.catalog()
    t = cat.create_table(f"{ns}.hist", SCHEMA)
    t.append(rows(2))
    old_hash = store.get_reference("main").hash
    time.sleep(0.05)
    between = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.05)
    t.append(rows(3, start=2))
    cat.create_table(f"{ns}.later", SCHEMA)
    assert cat.load_table(f"{ns}.hist").scan().to_arrow().num_rows == 5

    for pinned in (f"main@{old_hash}", f"main*{between}", f"@{old_hash[:12]}"):
        at = server.catalog(pinned)
        assert at.load_table(f"{ns}.hist").scan().to_arrow().num_rows == 2, pinned
        assert not at.table_exists(f"{ns}.later"), pinned
        assert (ns, "later") not in at.list_tables(ns)
        with pytest.raises(Exception, match=r"read-only|Cannot write"):
            at.create_table(f"{ns}.nope", SCHEMA)
    # The pinned catalogs wrote nothing.
    assert not cat.table_exists(f"{ns}.nope")
