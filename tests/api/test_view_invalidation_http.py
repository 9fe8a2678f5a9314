"""Strict invalidation and CASCADE, over HTTP: a drop that would break a view
in a strict namespace (its own property or an ancestor's) is refused with
409 and nothing written; lenient views are left invalid and reported;
``cascade=true`` drops every view that reads the object, at any depth, in
the drop's one commit."""

from __future__ import annotations

from typing import Any

from tests.api import spark_bodies as sb
from tests.api.test_rest_http import V1
from tests.api.test_view_analysis_http import make, view_body

STRICT = {"sapwood.view-invalidation": "strict"}


def namespace(http, *levels: str, properties: dict[str, str] | None = None) -> str:
    r = http.post(f"{V1}/namespaces", json={"namespace": list(levels),
                                            "properties": properties or {}})
    assert r.status_code == 200, r.text
    return "%1F".join(levels)


def nested_view(http, levels: tuple[str, ...], name: str, sql: str) -> None:
    body = view_body(name, sql, levels[0])
    body["view-version"]["default-namespace"] = list(levels)
    r = http.post(f"{V1}/namespaces/{'%1F'.join(levels)}/views", json=body)
    assert r.status_code == 200, r.text


def table(http, ns: str, name: str) -> None:
    r = http.post(f"{V1}/namespaces/{ns}/tables", json=sb.create_table(name))
    assert r.status_code == 200, r.text


def head(http) -> str:
    return http.get("/api/v2/trees/main").json()["reference"]["hash"]


def log(http, n: int) -> list[dict[str, Any]]:
    r = http.get("/api/v2/trees/main/history", params={"fetch": "ALL", "maxRecords": n})
    return r.json()["logEntries"]


def invalid(http) -> dict[str, list[str]]:
    views = http.get("/api/v2/trees/main/views?status=invalid").json()["views"]
    return {".".join(v["key"]): v["reasons"] for v in views}


def exists(http, path: str) -> bool:
    return http.head(f"{V1}/namespaces/{path}").status_code == 204


def test_lenient_drop_goes_through_and_the_view_is_reported_invalid(http, ns) -> None:
    table(http, ns, "t")
    make(http, ns, "v", "SELECT id FROM t")
    assert http.delete(f"{V1}/namespaces/{ns}/tables/t").status_code == 204
    assert invalid(http)[f"{ns}.v"] == [f"table {ns}.t dropped"]


def test_strict_view_namespace_refuses_the_drop(http, ns) -> None:
    views = namespace(http, f"{ns}_views", properties=STRICT)
    table(http, ns, "orders")
    make(http, views, "daily", f"SELECT id FROM {ns}.orders")
    before = head(http)
    r = http.delete(f"{V1}/namespaces/{ns}/tables/orders")
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert err["type"] == "CommitFailedException"
    assert err["message"] == (f"Cannot drop table {ns}.orders: views that read it would "
                              f"become invalid: {views}.daily (table {ns}.orders dropped)")
    assert head(http) == before and exists(http, f"{ns}/tables/orders")


def test_strict_is_inherited_from_a_parent_namespace(http, ns) -> None:
    namespace(http, f"{ns}_p", properties=STRICT)
    namespace(http, f"{ns}_p", "c")
    table(http, ns, "t")
    nested_view(http, (f"{ns}_p", "c"), "v", f"SELECT id FROM {ns}.t")
    # The child overriding it back to lenient wins over the parent.
    namespace(http, f"{ns}_p", "l", properties={"sapwood.view-invalidation": "lenient"})
    nested_view(http, (f"{ns}_p", "l"), "w", f"SELECT name FROM {ns}.t")
    before = head(http)
    r = http.delete(f"{V1}/namespaces/{ns}/tables/t")
    assert r.status_code == 409, r.text
    msg = r.json()["error"]["message"]
    assert f"{ns}_p.c.v (table {ns}.t dropped)" in msg and ".l.w" not in msg
    assert head(http) == before


def test_a_strict_view_of_a_lenient_view_refuses_too(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    make(http, ns, "mid", "SELECT id FROM t")
    make(http, strict, "top", f"SELECT id FROM {ns}.mid")
    r = http.delete(f"{V1}/namespaces/{ns}/tables/t")
    assert r.status_code == 409, r.text
    assert r.json()["error"]["message"].endswith(
        f"{strict}.top (view {ns}.mid it reads would become invalid)")


def test_cascade_drops_the_table_and_its_views_in_one_commit(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    table(http, ns, "other")
    make(http, ns, "l1", "SELECT id, name FROM t")
    make(http, strict, "l2", f"SELECT id FROM {ns}.l1")
    make(http, ns, "keep", "SELECT id FROM other")
    before = head(http)
    r = http.delete(f"{V1}/namespaces/{ns}/tables/t", params={"cascade": "true"})
    assert r.status_code == 204, r.text
    new, parent = log(http, 2)
    assert parent["commitMeta"]["hash"] == before
    assert new["commitMeta"]["message"] == f"drop table {ns}.t cascade (2 views)"
    assert sorted((o["type"], ".".join(o["key"]["elements"])) for o in new["operations"]) == [
        ("DELETE", f"{ns}.l1"), ("DELETE", f"{ns}.t"), ("DELETE", f"{strict}.l2")]
    assert not exists(http, f"{ns}/views/l1") and not exists(http, f"{strict}/views/l2")
    assert exists(http, f"{ns}/views/keep")


def test_dropping_a_view_with_dependents_is_checked_and_cascades(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    make(http, ns, "base", "SELECT id FROM t")
    make(http, strict, "a", f"SELECT id FROM {ns}.base")
    make(http, strict, "b", "SELECT id FROM a")
    before = head(http)
    r = http.delete(f"{V1}/namespaces/{ns}/views/base")
    assert r.status_code == 409, r.text
    assert r.json()["error"]["message"] == (
        f"Cannot drop view {ns}.base: views that read it would become invalid: "
        f"{strict}.a (view {ns}.base dropped), "
        f"{strict}.b (view {strict}.a it reads would become invalid)")
    assert head(http) == before
    r = http.delete(f"{V1}/namespaces/{ns}/views/base", params={"cascade": "true"})
    assert r.status_code == 204, r.text
    new, parent = log(http, 2)
    assert parent["commitMeta"]["hash"] == before
    assert new["commitMeta"]["message"] == f"drop view {ns}.base cascade (2 views)"
    assert len(new["operations"]) == 3
    assert exists(http, f"{ns}/tables/t") and not exists(http, f"{strict}/views/b")


def test_cascade_false_is_no_cascade_and_unread_tables_drop(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    make(http, strict, "v", f"SELECT id FROM {ns}.t")
    assert http.delete(f"{V1}/namespaces/{ns}/tables/t",
                       params={"cascade": "false"}).status_code == 409
    # Dropping a table nobody reads is not affected by the mode.
    table(http, strict, "lonely")
    assert http.delete(f"{V1}/namespaces/{strict}/tables/lonely").status_code == 204


def new_schema(http, ns: str, name: str, fields: list[dict[str, Any]]) -> Any:
    """Commit a new current schema with these fields (a column dropped or
    retyped), as an engine's ALTER TABLE would."""
    return http.post(f"{V1}/namespaces/{ns}/tables/{name}", json={
        "requirements": [{"type": "assert-current-schema-id", "current-schema-id": 0}],
        "updates": [{"action": "add-schema", "schema": {"type": "struct", "schema-id": 1,
                                                         "fields": fields}},
                    {"action": "set-current-schema", "schema-id": -1}]})


ID = {"id": 1, "name": "id", "required": False, "type": "long"}
NAME = {"id": 2, "name": "name", "required": False, "type": "string"}


def test_a_schema_change_breaking_a_strict_view_is_refused(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    make(http, strict, "v", f"SELECT name FROM {ns}.t")
    before = head(http)
    r = new_schema(http, ns, "t", [ID])
    assert r.status_code == 409, r.text
    assert r.json()["error"]["message"] == (
        f"Cannot change the schema of table {ns}.t: views that read it would become "
        f"invalid: {strict}.v (column name no longer exists in {ns}.t)")
    r = new_schema(http, ns, "t", [ID, {**NAME, "type": "int"}])
    assert r.status_code == 409 and "type of" in r.json()["error"]["message"], r.text
    assert head(http) == before


def test_a_schema_change_the_strict_view_does_not_see_is_allowed(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    make(http, strict, "v", f"SELECT id FROM {ns}.t")
    r = new_schema(http, ns, "t", [ID])
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["current-schema-id"] == 1
    assert f"{strict}.v" not in invalid(http)


def rename(http, kind: str, ns: str, src: str, dst: str) -> Any:
    return http.post(f"{V1}/{kind}/rename", json={
        "source": {"namespace": [ns], "name": src},
        "destination": {"namespace": [ns], "name": dst}})


def test_a_table_rename_names_the_new_name(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    table(http, ns, "u")
    make(http, strict, "v", f"SELECT id FROM {ns}.t")
    make(http, ns, "w", "SELECT id FROM u")
    before = head(http)
    r = rename(http, "tables", ns, "t", "t2")
    # 400: the spec keeps a rename's 409 for "the target exists".
    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"] == (
        f"Cannot rename table {ns}.t to {ns}.t2: views that read it would become invalid: "
        f"{strict}.v (table {ns}.t renamed to {ns}.t2)")
    assert head(http) == before and exists(http, f"{ns}/tables/t")
    # Lenient: the rename goes through, the view is listed invalid, saying why.
    assert rename(http, "tables", ns, "u", "u2").status_code == 204
    assert invalid(http)[f"{ns}.w"] == [f"table {ns}.u renamed to {ns}.u2"]


def test_a_view_rename_is_checked_like_a_table_rename(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    make(http, ns, "base", "SELECT id FROM t")
    make(http, strict, "top", f"SELECT id FROM {ns}.base")
    r = rename(http, "views", ns, "base", "base2")
    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"].endswith(
        f"{strict}.top (view {ns}.base renamed to {ns}.base2)")
    assert exists(http, f"{ns}/views/base")


def test_a_column_rename_is_told_from_a_drop(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    table(http, ns, "u")
    make(http, strict, "v", f"SELECT name FROM {ns}.t")
    make(http, ns, "w", "SELECT name FROM u")
    before = head(http)
    # Field 2 keeps its id under a new name: a rename, as ALTER TABLE … RENAME COLUMN writes it.
    r = new_schema(http, ns, "t", [ID, {**NAME, "name": "label"}])
    assert r.status_code == 409, r.text
    assert r.json()["error"]["message"].endswith(
        f"{strict}.v (column name of {ns}.t renamed to label)")
    assert head(http) == before
    assert new_schema(http, ns, "u", [ID, {**NAME, "name": "label"}]).status_code == 200
    assert invalid(http)[f"{ns}.w"] == [f"column name of {ns}.u renamed to label"]


def test_replacing_a_view_checks_the_views_that_read_it(http, ns) -> None:
    strict = namespace(http, f"{ns}_s", properties=STRICT)
    table(http, ns, "t")
    make(http, ns, "base", "SELECT id, name FROM t")
    make(http, strict, "top", f"SELECT name FROM {ns}.base")
    loaded = http.get(f"{V1}/namespaces/{ns}/views/base").json()["metadata"]
    before = head(http)
    body = sb.view_version("SELECT id FROM t", schema_id=1)
    body["default-namespace"] = [ns]
    r = http.post(f"{V1}/namespaces/{ns}/views/base", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": loaded["view-uuid"]}],
        "updates": [{"action": "add-schema", "schema": {
                        "type": "struct", "schema-id": 1, "fields": [ID]}},
                    {"action": "add-view-version", "view-version": body},
                    {"action": "set-current-view-version", "view-version-id": -1}]})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["message"] == (
        f"Cannot change the definition of view {ns}.base: views that read it would become "
        f"invalid: {strict}.top (column name no longer exists in {ns}.base)")
    assert head(http) == before
