"""Tables and views through the catalog layer itself: typed commands in,
typed results and domain errors out, nothing of HTTP on the way."""

from __future__ import annotations

import json
import re

import pytest
from pyiceberg.schema import Schema
from pyiceberg.table.update import SetPropertiesUpdate
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from catalog.commands import NewTable, NewView, Registration, TableCommit, ViewCommit
from catalog.kernel import Who
from catalog.metadata.engine_gc import answer_key
from catalog.services import CatalogServices
from catalog.targets import target
from core.errors import (
    AlreadyExistsError,
    BadRequestError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
)
from core.keys import ContentKey
from core.refs import parse_ref
from core.views import SetProperties

MAIN = parse_ref("main")
NS = ContentKey(["ns"])
WHO = Who("tester")
SCHEMA = Schema(NestedField(1, "n", LongType(), required=False))


def version(sql: str) -> ViewVersion:
    return ViewVersion(version_id=1, schema_id=0, timestamp_ms=1, default_namespace=["ns"],
                       representations=[SQLViewRepresentation(type="sql", sql=sql,
                                                              dialect="spark")])


def test_a_table_is_created_changed_and_loaded(services: CatalogServices) -> None:
    with pytest.raises(NoSuchNamespaceError, match="Namespace does not exist: ns"):
        services.tables.create(MAIN, NS, NewTable("t", SCHEMA), WHO)
    services.namespaces.create(MAIN, NS, {}, WHO)
    made = services.tables.create(MAIN, NS, NewTable("t", SCHEMA), WHO)
    assert made.location is not None and made.cache_key == answer_key(made.location)
    t = target(MAIN, NS, "t")
    assert services.tables.load(t) == made
    changed = services.tables.commit(t, TableCommit(
        updates=[SetPropertiesUpdate(updates={"a": "b"})]), WHO)
    assert changed.location != made.location
    assert json.loads(changed.metadata)["properties"]["a"] == "b"
    staged = services.tables.create(MAIN, NS, NewTable("s", SCHEMA, stage_create=True), WHO)
    assert staged.location is None and staged.cache_key is None
    with pytest.raises(AlreadyExistsError, match=re.escape("Table already exists: ns.t")):
        services.tables.create(MAIN, NS, NewTable("t", SCHEMA), WHO)
    with pytest.raises(NoSuchTableError, match=re.escape("Table does not exist: ns.nope")):
        services.tables.load(target(MAIN, NS, "nope"))


def test_register_adopts_only_from_outside(services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    made = services.tables.create(MAIN, NS, NewTable("t", SCHEMA), WHO)
    assert made.location is not None
    with pytest.raises(BadRequestError, match="overlaps the location"):
        services.tables.register(MAIN, NS, Registration("copy", made.location), WHO)
    with pytest.raises(BadRequestError, match=re.escape("Cannot register table ns.gone")):
        services.tables.register(MAIN, NS, Registration("gone", made.location + ".x"), WHO)


def test_a_view_is_created_replaced_and_loaded(services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    made = services.views.create(MAIN, NS, NewView("v", SCHEMA, version("SELECT 1 AS n")),
                                 WHO)
    t = target(MAIN, NS, "v")
    assert services.views.load(t) == made
    replaced = services.views.replace(t, ViewCommit(updates=[
        SetProperties(updates={"comment": "x"})]), WHO)
    assert json.loads(replaced.metadata)["properties"]["comment"] == "x"
    with pytest.raises(NoSuchViewError, match=re.escape("View does not exist: ns.w")):
        services.views.load(target(MAIN, NS, "w"))
