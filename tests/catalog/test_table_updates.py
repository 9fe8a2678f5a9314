"""Table updates applied as Iceberg's ``TableMetadata.Builder`` applies them,
field by field against the REST spec's updates (TableUpdate in
iceberg-rest-catalog-open-api.yaml), through the catalog layer on SQLite
and PostgreSQL: the ids of ``add-schema``, ``add-spec`` and
``add-sort-order`` are the server's (an identical one's, else one past the
highest) and ``-1`` is the last one added; a column's ``initial-default``
and ``write-default`` are kept when a table is created; every integer an
update carries is one Iceberg can hold and use (docs/iceberg-rest.md,
"Updates as Iceberg applies them")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from pydantic import TypeAdapter
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import write_manifest_list
from pyiceberg.schema import Schema
from pyiceberg.table.update import TableRequirement, TableUpdate
from pyiceberg.types import IntegerType, LongType, NestedField

from catalog.commands import NewTable, TableCommit
from catalog.kernel import Who
from catalog.services import CatalogServices
from catalog.targets import Target, target
from core.errors import BadRequestError
from core.keys import ContentKey
from core.refs import parse_ref

MAIN = parse_ref("main")
NS = ContentKey(["ns"])
WHO = Who("tester")
SCHEMA = Schema(NestedField(1, "n", LongType(), required=False))
UPDATES = TypeAdapter(list[TableUpdate])
REQUIREMENTS = TypeAdapter(list[TableRequirement])
INT64_MAX = 2**63 - 1


def table(services: CatalogServices, name: str = "t", **props: str) -> Target:
    if name == "t":
        services.namespaces.create(MAIN, NS, {}, WHO)
    services.tables.create(MAIN, NS, NewTable(name, SCHEMA, properties=props), WHO)
    return target(MAIN, NS, name)


def commit(services: CatalogServices, t: Target, *updates: dict[str, Any],
           requirements: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    """The updates and requirements as a client sends them (JSON), applied."""
    done = services.tables.commit(t, TableCommit(REQUIREMENTS.validate_python(requirements),
                                                 UPDATES.validate_python(list(updates))), WHO)
    return json.loads(done.metadata)


def loaded(services: CatalogServices, t: Target) -> dict[str, Any]:
    return json.loads(services.tables.load(t).metadata)


def schema(*fields: tuple[int, str, str], schema_id: int = 0) -> dict[str, Any]:
    return {"type": "struct", "schema-id": schema_id, "fields": [
        {"id": i, "name": n, "type": t, "required": False} for i, n, t in fields]}


def spec(spec_id: int, field_id: int, transform: str = "bucket[4]") -> dict[str, Any]:
    return {"action": "add-spec", "spec": {"spec-id": spec_id, "fields": [
        {"name": "n_part", "transform": transform, "source-id": 1, "field-id": field_id}]}}


def order(order_id: int, direction: str) -> dict[str, Any]:
    return {"action": "add-sort-order", "sort-order": {"order-id": order_id, "fields": [
        {"transform": "identity", "source-id": 1, "direction": direction,
         "null-order": "nulls-first"}]}}


def snapshot(location: str, snapshot_id: int, **fields: Any) -> dict[str, Any]:
    """An add-snapshot whose manifest list is there (an empty one)."""
    path = f"{location}/metadata/snap-{snapshot_id}.avro"
    local = Path(urlparse(path).path)
    local.parent.mkdir(parents=True, exist_ok=True)
    with write_manifest_list(2, PyArrowFileIO().new_output(str(local)), snapshot_id, None, 1,
                             "null"):
        pass
    return {"action": "add-snapshot", "snapshot": {
        "snapshot-id": snapshot_id, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
        "manifest-list": path, "summary": {"operation": "append"}, "schema-id": 0, **fields}}


def ids(meta: dict[str, Any], kind: str, key: str) -> list[int]:
    return [x[key] for x in meta[kind]]


# -- ids: reuse an identical one's, else one past the highest; -1 = the last added ------------
SET_SCHEMA = {"action": "set-current-schema", "schema-id": -1}
SET_SPEC = {"action": "set-default-spec", "spec-id": -1}
SET_ORDER = {"action": "set-default-sort-order", "sort-order-id": -1}
TWO = schema((1, "n", "long"), (2, "m", "string"))

ID_CASES = [
    # (what, commits one after another, (list, id field, default field), ids, default)
    ("add-schema whose schema-id 0 another schema holds gets 1",
     [[{"action": "add-schema", "schema": TWO}, SET_SCHEMA]],
     ("schemas", "schema-id", "current-schema-id"), [0, 1], 1),
    ("add-schema identical to schema 0 adds nothing; -1 is 0",
     [[{"action": "add-schema", "schema": schema((1, "n", "long"), schema_id=5)}, SET_SCHEMA]],
     ("schemas", "schema-id", "current-schema-id"), [0], 0),
    ("set-current-schema naming the id the client gave its added schema means that one",
     [[{"action": "add-schema", "schema": TWO},
       {"action": "set-current-schema", "schema-id": 0}]],
     ("schemas", "schema-id", "current-schema-id"), [0, 1], 1),
    ("add-spec whose spec-id 0 the unpartitioned spec holds gets 1",
     [[spec(0, 1000), SET_SPEC]], ("partition-specs", "spec-id", "default-spec-id"), [0, 1], 1),
    ("add-spec like spec 1 but for its field-id adds nothing; -1 is 1",
     [[spec(0, 1000), SET_SPEC], [spec(7, 1001), SET_SPEC]],
     ("partition-specs", "spec-id", "default-spec-id"), [0, 1], 1),
    ("add-sort-order whose order-id 1 another order holds gets 2",
     [[order(1, "asc"), SET_ORDER], [order(1, "desc"), SET_ORDER]],
     ("sort-orders", "order-id", "default-sort-order-id"), [0, 1, 2], 2),
    ("add-sort-order identical to order 1 adds nothing; -1 is 1",
     [[order(1, "asc"), SET_ORDER], [order(3, "asc"), SET_ORDER]],
     ("sort-orders", "order-id", "default-sort-order-id"), [0, 1], 1),
    ("add-sort-order of the unsorted order under id 4 is order 0",
     [[order(1, "asc"), SET_ORDER],
      [{"action": "add-sort-order", "sort-order": {"order-id": 4, "fields": []}}, SET_ORDER]],
     ("sort-orders", "order-id", "default-sort-order-id"), [0, 1], 0),
]


@pytest.mark.parametrize(("what", "commits", "fields", "expected", "default"), ID_CASES,
                         ids=[c[0] for c in ID_CASES])
def test_ids_are_assigned_as_iceberg_assigns_them(
        services: CatalogServices, what: str, commits: list[list[dict[str, Any]]],
        fields: tuple[str, str, str], expected: list[int], default: int) -> None:
    t = table(services)
    for updates in commits:
        meta = commit(services, t, *updates)
    kind, key, current = fields
    assert ids(meta, kind, key) == expected and meta[current] == default, what
    again = loaded(services, t)
    assert ids(again, kind, key) == expected and again[current] == default
    assert len(set(ids(again, kind, key))) == len(again[kind])  # never two with one id


def test_a_replaced_schema_keeps_its_fields_under_the_new_id(services: CatalogServices) -> None:
    t = table(services)
    meta = commit(services, t, {"action": "add-schema", "schema": TWO}, SET_SCHEMA)
    (new,) = [s for s in meta["schemas"] if s["schema-id"] == 1]
    assert [f["name"] for f in new["fields"]] == ["n", "m"] and meta["last-column-id"] == 2
    assert [f["name"] for f in meta["schemas"][0]["fields"]] == ["n"]


@pytest.mark.parametrize(("update", "message"), [
    (SET_SCHEMA, "Cannot set last added schema: no schema has been added"),
    (SET_SPEC, "Cannot set last added spec: no spec has been added"),
    (SET_ORDER, "Cannot set last added sort order: no sort order has been added"),
    ({"action": "set-current-schema", "schema-id": 9},
     "Cannot set current schema to unknown schema: 9"),
], ids=["schema", "spec", "sort order", "unknown schema"])
def test_last_added_without_an_add_is_refused_in_iceberg_words(
        services: CatalogServices, update: dict[str, Any], message: str) -> None:
    t = table(services)
    before = services.tables.load(t)
    with pytest.raises(BadRequestError) as e:
        commit(services, t, update)
    assert e.value.message == message
    assert services.tables.load(t) == before


# -- column defaults ----------------------------------------------------------------------------
DEFAULTED = Schema(NestedField(1, "a", IntegerType(), required=True, initial_default=12,
                               write_default=10),
                   NestedField(2, "b", LongType(), required=False))


@pytest.mark.parametrize("staged", [False, True], ids=["create", "staged create"])
def test_a_new_v3_tables_defaults_are_kept(services: CatalogServices, staged: bool) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    made = services.tables.create(MAIN, NS, NewTable(
        "t", DEFAULTED, stage_create=staged, properties={"format-version": "3"}), WHO)
    metas = [json.loads(made.metadata)]
    if not staged:
        metas.append(loaded(services, target(MAIN, NS, "t")))
    for meta in metas:
        (a, b) = meta["schemas"][0]["fields"]
        assert (a["initial-default"], a["write-default"]) == (12, 10)
        assert "initial-default" not in b and "write-default" not in b


def test_an_initial_default_needs_format_v3(services: CatalogServices) -> None:
    services.namespaces.create(MAIN, NS, {}, WHO)
    with pytest.raises(BadRequestError, match=r"Invalid schema for v2: invalid initial default "
                       r"for a: non-null default \(12\) is not supported until v3"):
        services.tables.create(MAIN, NS, NewTable("t", DEFAULTED), WHO)
    t = table(services, "u")
    with pytest.raises(BadRequestError, match="not supported until v3"):
        commit(services, t, {"action": "add-schema", "schema": {
            **TWO, "fields": [*TWO["fields"][:1], {**TWO["fields"][1], "initial-default": "x"}]}})
    assert ids(loaded(services, t), "schemas", "schema-id") == [0]


# -- integers Iceberg can hold and use ----------------------------------------------------------
def _ref(**fields: Any) -> dict[str, Any]:
    return {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
            "snapshot-id": 1, **fields}


INTEGER_CASES: list[tuple[str, Any, str]] = [
    ("snapshot-id", lambda loc: [snapshot(loc, -5)],
     "Invalid add-snapshot update: snapshot.snapshot-id -5 cannot be negative"),
    ("parent-snapshot-id", lambda loc: [snapshot(loc, 1, **{"parent-snapshot-id": -1})],
     "snapshot.parent-snapshot-id -1 cannot be negative"),
    ("sequence-number", lambda loc: [snapshot(loc, 1, **{"sequence-number": -3})],
     "snapshot.sequence-number -3 cannot be negative"),
    ("min-snapshots-to-keep", lambda loc: [snapshot(loc, 1),
                                           _ref(**{"min-snapshots-to-keep": 2**31})],
     "Invalid set-snapshot-ref update: min-snapshots-to-keep 2147483648 is past 2147483647"),
    ("a schema's field id", lambda loc: [{"action": "add-schema", "schema": schema(
        (1, "n", "long"), (2**31, "m", "string"))}],
     "Invalid add-schema update: schema field 'm' id 2147483648 is past 2147483647"),
    ("a spec's field-id", lambda loc: [spec(1, 2**31)],
     "Invalid add-spec update: spec field-id 2147483648 is past 2147483647"),
    ("statistics file-size-in-bytes", lambda loc: [snapshot(loc, 1), {
        "action": "set-statistics", "snapshot-id": 1, "statistics": {
            "snapshot-id": 1, "statistics-path": f"{loc}/metadata/s.puffin",
            "file-size-in-bytes": -1, "file-footer-size-in-bytes": 0, "blob-metadata": []}}],
     "statistics.file-size-in-bytes -1 cannot be negative"),
]


@pytest.mark.parametrize(("field", "updates", "message"), INTEGER_CASES,
                         ids=[c[0] for c in INTEGER_CASES])
def test_an_integer_iceberg_cannot_use_is_refused_naming_it(
        services: CatalogServices, field: str, updates: Any, message: str) -> None:
    t = table(services)
    before = services.tables.load(t)
    location = json.loads(before.metadata)["location"]
    with pytest.raises(BadRequestError) as e:
        commit(services, t, *updates(location))
    assert message in e.value.message, field
    assert services.tables.load(t) == before


def test_next_row_id_past_int64_is_refused_and_the_table_stays_usable(
        services: CatalogServices) -> None:
    t = table(services, **{"format-version": "3"})
    location = loaded(services, t)["location"]
    big = INT64_MAX - 1  # 2^63-2 + 2^63-2 is 18446744073709551612
    with pytest.raises(BadRequestError, match=r"first-row-id 9223372036854775806 \+ added-rows "
                       r"9223372036854775806 is past the largest row id 9223372036854775807 "
                       r"\(next-row-id"):
        commit(services, t, snapshot(location, 1, **{"first-row-id": big, "added-rows": big}),
               _ref())
    assert loaded(services, t)["next-row-id"] == 0
    # Up to the largest row id is fine; the table can still be appended to.
    meta = commit(services, t, snapshot(location, 2, **{"first-row-id": 0, "added-rows": 5}),
                  {**_ref(), "snapshot-id": 2})
    assert meta["next-row-id"] == 5
