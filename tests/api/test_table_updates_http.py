"""Table and view updates over the Iceberg REST API, on a real server (SQLite
and PostgreSQL), driven by raw HTTP as Spark and Iceberg's Java client send
them and by PyIceberg: integers and booleans of the JSON type the spec
declares (``"2"``, ``true`` or ``2.0`` for an integer is a 400 naming the
field), a v3 ``next-row-id`` that would not fit in 64 bits refused,
server-assigned ids (two writers adding sort order 1), a create's column
defaults kept, requirements failing in Iceberg's words, and the caller's
spelling of a location kept (docs/iceberg-rest.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import httpx
import pyarrow as pa
import pytest
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.types import LongType

from tests.api import spark_bodies as sb
from tests.server import Server

V1 = "/iceberg/v1"
INT64_MAX = 2**63 - 1


def _table(http: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    r = http.get(f"{V1}/namespaces/{ns}/tables/{name}")
    assert r.status_code == 200, r.text
    return r.json()


def _create(http: httpx.Client, ns: str, name: str, **extra: Any) -> dict[str, Any]:
    r = http.post(f"{V1}/namespaces/{ns}/tables", json={**sb.create_table(name), **extra})
    assert r.status_code == 200, r.text
    return r.json()["metadata"]


def _commit(http: httpx.Client, ns: str, name: str, body: dict[str, Any]) -> httpx.Response:
    return http.post(f"{V1}/namespaces/{ns}/tables/{name}", json=body)


def _snapshot(location: str, snapshot_id: int, **fields: Any) -> dict[str, Any]:
    sb.write_manifest_list(location, snapshot_id)
    return {"action": "add-snapshot", "snapshot": {
        "snapshot-id": snapshot_id, "sequence-number": 1, "timestamp-ms": sb.now_ms(),
        "manifest-list": sb.manifest_list(location, snapshot_id),
        "summary": {"operation": "append"}, "schema-id": 0, **fields}}


def _main(snapshot_id: Any) -> dict[str, Any]:
    return {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
            "snapshot-id": snapshot_id}


# -- JSON types: what the spec declares, not what lax parsing makes of it ----------------------
def _append(meta: dict[str, Any], first: Any, ref: Any = 1) -> dict[str, Any]:
    return {"updates": [_snapshot(meta["location"], 1, **{"first-row-id": first,
                                                           "added-rows": 1}), _main(ref)]}


LOOSE: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    ("first-row-id as a string", lambda m: _append(m, "0"),
     "updates[0].snapshot.first-row-id: expected a JSON integer, got string '0'"),
    ("first-row-id as a boolean", lambda m: _append(m, False),
     "updates[0].snapshot.first-row-id: expected a JSON integer, got boolean False"),
    ("first-row-id as a float", lambda m: _append(m, 0.0),
     "updates[0].snapshot.first-row-id: expected a JSON integer, got number 0.0"),
    ("set-snapshot-ref's snapshot-id as a string", lambda m: _append(m, 0, "1"),
     "updates[1].snapshot-id: expected a JSON integer, got string '1'"),
    ("a requirement's id as a string", lambda m: {
        "requirements": [{"type": "assert-current-schema-id", "current-schema-id": "0"}],
        "updates": [{"action": "set-properties", "updates": {"a": "b"}}]},
     "requirements[0].current-schema-id: expected a JSON integer, got string '0'"),
]


@pytest.mark.parametrize(("what", "body", "named"), LOOSE, ids=[c[0] for c in LOOSE])
def test_an_integer_of_another_json_type_is_refused_naming_it(
        http: httpx.Client, ns: str, what: str,
        body: Callable[[dict[str, Any]], dict[str, Any]], named: str) -> None:
    meta = _create(http, ns, "t", properties={"format-version": "3"})
    r = _commit(http, ns, "t", body(meta))
    assert r.status_code == 400, (what, r.text)
    assert named in r.json()["error"]["message"], r.text
    assert _table(http, ns, "t")["metadata"] == meta  # nothing changed


@pytest.mark.parametrize(("what", "body", "named"), [
    ("upgrade-format-version as a string",
     {"updates": [{"action": "upgrade-format-version", "format-version": "3"}]},
     "updates[0].format-version: expected a JSON integer, got string '3'"),
], ids=["upgrade"])
def test_a_format_version_is_a_json_integer(http: httpx.Client, ns: str, what: str,
                                            body: dict[str, Any], named: str) -> None:
    meta = _create(http, ns, "t")
    r = _commit(http, ns, "t", body)
    assert r.status_code == 400 and named in r.json()["error"]["message"], r.text
    assert _table(http, ns, "t")["metadata"]["format-version"] == meta["format-version"] == 2


@pytest.mark.parametrize(("extra", "named"), [
    ({"properties": {"format-version": "3 "}},
     "Table format version '3 ' is not supported"),
    ({"stage-create": "yes"}, "stage-create: expected a JSON boolean, got string 'yes'"),
    ({"schema": {**sb.SCHEMA, "fields": [{**sb.SCHEMA["fields"][0], "required": "false"}]}},
     "schema.fields[0].required: expected a JSON boolean, got string 'false'"),
], ids=["format-version '3 '", "stage-create", "required"])
def test_a_create_with_a_lax_value_is_refused_naming_it(
        http: httpx.Client, ns: str, extra: dict[str, Any], named: str) -> None:
    r = http.post(f"{V1}/namespaces/{ns}/tables", json={**sb.create_table("t"), **extra})
    assert r.status_code == 400 and named in r.json()["error"]["message"], r.text
    assert http.get(f"{V1}/namespaces/{ns}/tables/t").status_code == 404


def test_a_retention_duration_in_other_digits_is_refused(http: httpx.Client) -> None:
    r = http.put("/api/v2/retention", json={"policies": [{"refs": "x", "keep": "P٣D"}]})
    assert r.status_code == 400 and "Invalid duration 'P٣D'" in r.text, r.text
    assert http.get("/api/v2/retention").json() == {"policies": []}


# -- row ids that fit ----------------------------------------------------------------------------
def test_a_next_row_id_past_int64_is_refused_and_the_table_takes_appends(
        http: httpx.Client, ns: str) -> None:
    meta = _create(http, ns, "t", properties={"format-version": "3"})
    big = INT64_MAX - 1
    r = _commit(http, ns, "t", {"updates": [
        _snapshot(meta["location"], 1, **{"first-row-id": big, "added-rows": big}), _main(1)]})
    assert r.status_code == 400, r.text
    assert "(next-row-id would not fit in 64 bits)" in r.json()["error"]["message"]
    assert _table(http, ns, "t")["metadata"]["next-row-id"] == 0
    r = _commit(http, ns, "t", _append(meta, 0))
    assert r.status_code == 200 and r.json()["metadata"]["next-row-id"] == 1, r.text


def test_a_snapshot_summary_cannot_carry_the_servers_merge_link(http: httpx.Client,
                                                                 ns: str) -> None:
    """A content merge marks the snapshot it writes with
    sapwood.merged-snapshot-id, and later merges follow it as a link in the
    table's history: a client's snapshot may not carry it (or any sapwood.*
    field), or a merge could take a replaced history for one that continues."""
    meta = _create(http, ns, "t")
    for name in ("sapwood.merged-snapshot-id", "Sapwood.Anything"):
        forged = _snapshot(meta["location"], 7, summary={"operation": "append", name: "1"})
        r = _commit(http, ns, "t", {"updates": [forged, _main(7)]})
        assert r.status_code == 400, r.text
        assert (f"updates[0].snapshot.summary: {name}: summary fields that start with "
                "'sapwood.' are written by the server only") in r.json()["error"]["message"]
    assert _table(http, ns, "t")["metadata"].get("snapshots", []) == []
    r = _commit(http, ns, "t", {"updates": [_snapshot(meta["location"], 7), _main(7)]})
    assert r.status_code == 200, r.text


# -- ids the server assigns -----------------------------------------------------------------------
def _order(direction: str) -> dict[str, Any]:
    return {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
        {"transform": "identity", "source-id": 1, "direction": direction,
         "null-order": "nulls-last"}]}}


def test_two_writers_adding_sort_order_1_get_1_and_2(http: httpx.Client, ns: str) -> None:
    _create(http, ns, "t")
    last = {"action": "set-default-sort-order", "sort-order-id": -1}
    for direction in ("asc", "desc"):  # each built on order 0 alone, as two replaces are
        r = _commit(http, ns, "t", {"updates": [_order(direction), last]})
        assert r.status_code == 200, r.text
    meta = _table(http, ns, "t")["metadata"]
    assert [o["order-id"] for o in meta["sort-orders"]] == [0, 1, 2]
    assert meta["default-sort-order-id"] == 2
    assert meta["sort-orders"][2]["fields"][0]["direction"] == "desc"


def test_an_add_schema_with_a_taken_id_never_makes_two_schema_0(http: httpx.Client,
                                                                 ns: str) -> None:
    _create(http, ns, "t")
    wider = copy.deepcopy(sb.SCHEMA)
    wider["fields"].append({"id": 3, "name": "n", "required": False, "type": "int"})
    r = _commit(http, ns, "t", {"updates": [{"action": "add-schema", "schema": wider},
                                            {"action": "set-current-schema", "schema-id": -1}]})
    assert r.status_code == 200, r.text
    meta = _table(http, ns, "t")["metadata"]
    assert [s["schema-id"] for s in meta["schemas"]] == [0, 1]
    assert meta["current-schema-id"] == 1 and meta["last-column-id"] == 3


# -- defaults, requirements, locations ------------------------------------------------------------
def test_a_v3_create_keeps_its_column_defaults(server: Server, http: httpx.Client,
                                               ns: str) -> None:
    field = {"id": 1, "name": "a", "type": "int", "required": True,
             "initial-default": 12, "write-default": 10}
    made = _create(http, ns, "t", schema={"type": "struct", "fields": [field]},
                   properties={"format-version": "3"})
    for meta in (made, _table(http, ns, "t")["metadata"]):
        assert meta["schemas"][0]["fields"] == [field]
    a = server.catalog().load_table(f"{ns}.t").schema().find_field("a")
    assert (a.initial_default, a.write_default) == (12, 10)


def test_requirements_fail_in_iceberg_words(server: Server, http: httpx.Client,
                                            ns: str) -> None:
    _create(http, ns, "t")
    r = _commit(http, ns, "t", {"requirements": [{"type": "assert-create"}], "updates": []})
    assert r.status_code == 409, r.text
    assert r.json()["error"] == {"message": "Requirement failed: table already exists",
                                 "type": "CommitFailedException", "code": 409}
    stale = server.catalog().load_table(f"{ns}.t")
    with server.catalog().load_table(f"{ns}.t").update_schema() as u:
        u.add_column("x", LongType())
    with pytest.raises(CommitFailedException, match="Requirement failed: current schema "
                       "changed: expected id 0 != 1"), stale.update_schema() as u:
        u.add_column("y", LongType())


def test_a_location_keeps_the_callers_spelling(server: Server, http: httpx.Client,
                                               ns: str) -> None:
    wh = urlparse(server.warehouse).path.rstrip("/")
    made = http.post(f"{V1}/namespaces/{ns}/tables",
                     json={**sb.create_table("t"), "location": f"file:{wh}/spelled/t"})
    assert made.status_code == 200, made.text
    for answer in (made.json(), _table(http, ns, "t")):
        assert answer["metadata"]["location"] == f"file:{wh}/spelled/t"
        assert answer["metadata-location"].startswith(f"file:{wh}/spelled/t/metadata/")
    t = server.catalog().load_table(f"{ns}.t")  # PyIceberg writes under it
    t.append(pa.table({"id": pa.array([1], pa.int64()), "name": pa.array(["a"], pa.string())}))
    assert t.scan().to_arrow().num_rows == 1
    view = http.post(f"{V1}/namespaces/{ns}/views",
                     json={**sb.create_view("v", "SELECT 1 AS id, 'a' AS name"),
                           "location": f"file:{wh}/spelled/v"})
    assert view.status_code == 200, view.text
    assert view.json()["metadata"]["location"] == f"file:{wh}/spelled/v"
