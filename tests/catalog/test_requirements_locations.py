"""A commit's requirements fail in Iceberg's words (``UpdateRequirement.java``,
one case per requirement of the REST spec's TableRequirement and
ViewRequirement), a location keeps the caller's spelling (``file:/a/b``
stays ``file:/a/b``, as Iceberg keeps it), and a view's added schema gets
the server's id even where a version names it by the client's; through the
catalog layer on SQLite and PostgreSQL (docs/iceberg-rest.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from catalog.commands import NewTable, NewView, ViewCommit
from catalog.services import CatalogServices
from catalog.targets import Target, target
from core.errors import RequirementFailedError
from core.views import AddSchema, AddViewVersion, AssertViewUUID, SetCurrentViewVersion
from core.views import SetLocation as SetViewLocation
from tests.catalog.test_table_updates import (
    MAIN,
    NS,
    SCHEMA,
    WHO,
    commit,
    loaded,
    order,
    schema,
    snapshot,
    spec,
    table,
)

OTHER_UUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"


# -- requirements ------------------------------------------------------------------------------
def _changed_table(services: CatalogServices) -> tuple[Target, dict[str, Any]]:
    """A table whose every id moved once: schema 1 (last column 2), spec 1
    (last partition id 1000), sort order 1, snapshot 1 on main and tag t."""
    t = table(services)
    location = loaded(services, t)["location"]
    meta = commit(services, t,
                  {"action": "add-schema",
                   "schema": schema((1, "n", "long"), (2, "m", "string"), schema_id=1)},
                  {"action": "set-current-schema", "schema-id": -1},
                  spec(1, 1000), {"action": "set-default-spec", "spec-id": -1},
                  order(1, "asc"), {"action": "set-default-sort-order", "sort-order-id": -1},
                  snapshot(location, 1),
                  {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                   "snapshot-id": 1},
                  {"action": "set-snapshot-ref", "ref-name": "t", "type": "tag",
                   "snapshot-id": 1})
    return t, meta


REQUIREMENT_CASES: list[tuple[dict[str, Any], str]] = [
    ({"type": "assert-create"}, "Requirement failed: table already exists"),
    ({"type": "assert-table-uuid", "uuid": OTHER_UUID},
     "Requirement failed: UUID does not match: expected {uuid} != " + OTHER_UUID),
    ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 7},
     "Requirement failed: branch main has changed: expected id 7 != 1"),
    ({"type": "assert-ref-snapshot-id", "ref": "t", "snapshot-id": 7},
     "Requirement failed: tag t has changed: expected id 7 != 1"),
    ({"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1},
     "Requirement failed: last assigned field id changed: expected id 1 != 2"),
    ({"type": "assert-current-schema-id", "current-schema-id": 0},
     "Requirement failed: current schema changed: expected id 0 != 1"),
    ({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
     "Requirement failed: last assigned partition id changed: expected id 999 != 1000"),
    ({"type": "assert-default-spec-id", "default-spec-id": 0},
     "Requirement failed: default partition spec changed: expected id 0 != 1"),
    ({"type": "assert-default-sort-order-id", "default-sort-order-id": 0},
     "Requirement failed: default sort order changed: expected id 0 != 1"),
]


@pytest.mark.parametrize(("requirement", "message"), REQUIREMENT_CASES,
                         ids=[f"{r['type']}-{i}" for i, (r, _) in enumerate(REQUIREMENT_CASES)])
def test_a_failed_requirement_says_so_in_iceberg_words(
        services: CatalogServices, requirement: dict[str, Any], message: str) -> None:
    t, meta = _changed_table(services)
    before = services.tables.load(t)
    with pytest.raises(RequirementFailedError) as e:
        commit(services, t, {"action": "set-properties", "updates": {"a": "b"}},
               requirements=(requirement,))
    assert e.value.message == message.format(uuid=meta["table-uuid"])
    assert services.tables.load(t) == before


def test_a_ref_a_table_without_snapshots_lacks_is_missing(services: CatalogServices) -> None:
    # PyIceberg answers "Table has no snapshots and can only be written to
    # the main BRANCH"; Iceberg's Java names the ref that is missing.
    t = table(services)
    with pytest.raises(RequirementFailedError) as e:
        commit(services, t, requirements=(
            {"type": "assert-ref-snapshot-id", "ref": "b", "snapshot-id": 5},))
    assert e.value.message == "Requirement failed: branch or tag b is missing, expected 5"


def version(schema_id: int, sql: str) -> ViewVersion:
    return ViewVersion(version_id=1, schema_id=schema_id, timestamp_ms=1,
                       default_namespace=["ns"],
                       representations=[SQLViewRepresentation(type="sql", sql=sql,
                                                              dialect="spark")])


def test_a_views_uuid_requirement_says_so_in_iceberg_words(services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    made = services.views.create(MAIN, NS, NewView("v", SCHEMA, version(0, "SELECT 1 AS n")),
                                 WHO)
    view_uuid = json.loads(made.metadata)["view-uuid"]
    with pytest.raises(RequirementFailedError) as e:
        services.views.replace(target(MAIN, NS, "v"), ViewCommit(
            requirements=[AssertViewUUID(uuid=OTHER_UUID)]), WHO)
    assert e.value.message == ("Requirement failed: view UUID does not match: expected "
                               f"{view_uuid} != {OTHER_UUID}")


# -- a view's added schema ---------------------------------------------------------------------
def test_a_views_version_naming_its_added_schema_by_the_clients_id_gets_it(
        services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    services.views.create(MAIN, NS, NewView("v", SCHEMA, version(0, "SELECT 1 AS n")), WHO)
    two = Schema(NestedField(1, "n", LongType(), required=False),
                 NestedField(2, "s", StringType(), required=False), schema_id=0)
    # Schema 0 is the view's first schema: the client's 0 becomes 1, and
    # the version naming schema 0 means the schema added with it.
    meta = json.loads(services.views.replace(target(MAIN, NS, "v"), ViewCommit(updates=[
        AddSchema(schema_=two),
        AddViewVersion(view_version=version(0, "SELECT 1 AS n, 'a' AS s")),
        SetCurrentViewVersion(view_version_id=-1)]), WHO).metadata)
    assert [s["schema-id"] for s in meta["schemas"]] == [0, 1]
    (current,) = [v for v in meta["versions"] if v["version-id"] == meta["current-version-id"]]
    assert current["schema-id"] == 1
    assert [f["name"] for f in meta["schemas"][1]["fields"]] == ["n", "s"]


# -- the caller's spelling of a location -------------------------------------------------------
def _warehouse(services: CatalogServices) -> str:
    """The warehouse's path (its URI is file:///...)."""
    return services.tables.catalog.locations.root.path.rstrip("/")


def test_a_tables_location_keeps_the_callers_spelling(services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    wh = _warehouse(services)
    made = services.tables.create(MAIN, NS, NewTable("t", SCHEMA, location=f"file:{wh}/a/b/"),
                                  WHO)
    t = target(MAIN, NS, "t")
    assert json.loads(made.metadata)["location"] == f"file:{wh}/a/b"  # less the slash
    assert made.location is not None and made.location.startswith(f"file:{wh}/a/b/metadata/")
    assert loaded(services, t)["location"] == f"file:{wh}/a/b"
    meta = commit(services, t, {"action": "set-location", "location": f"file:{wh}/c"})
    assert meta["location"] == f"file:{wh}/c"
    assert services.tables.load(t).location.startswith(f"file:{wh}/c/metadata/")
    # A path the check had to normalise is kept as it was judged.
    meta = commit(services, t, {"action": "set-location", "location": f"file:{wh}/c/../d"})
    assert meta["location"] == f"file://{wh}/d"


def test_a_views_location_keeps_the_callers_spelling(services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    wh = _warehouse(services)
    made = services.views.create(MAIN, NS, NewView(
        "v", SCHEMA, version(0, "SELECT 1 AS n"), location=f"file:{wh}/views/v",
        properties={"write.metadata.path": f"file:{wh}/views/meta"}), WHO)
    assert json.loads(made.metadata)["location"] == f"file:{wh}/views/v"
    assert made.location is not None and made.location.startswith(f"file:{wh}/views/meta/")
    moved = services.views.replace(target(MAIN, NS, "v"), ViewCommit(updates=[
        SetViewLocation(location=f"file:{wh}/views/w")]), WHO)
    assert json.loads(moved.metadata)["location"] == f"file:{wh}/views/w"
