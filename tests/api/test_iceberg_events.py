"""The proposed Iceberg REST events endpoint (POST /iceberg/v1/{prefix}/events,
apache/iceberg pull request 12584): each change taken apart into one event
per object with the proposal's operation types, paged by continuation
token without splitting a change, filtered as the request asks, for the
prefix's reference only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa

from tests.api import spark_bodies as sb
from tests.http import http_client
from tests.server import serving

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])


def _all(http: httpx.Client, path: str = "/iceberg/v1/events", **body: Any) -> list[dict]:
    """Every event, a page at a time, by continuation token."""
    out: list[dict] = []
    token = None
    while True:
        r = http.post(path, json={**body, **({"continuation-token": token} if token else {})})
        assert r.status_code == 200, r.text
        page = r.json()
        if not page["events"]:
            return out
        out += page["events"]
        assert page["continuation-token"] != token
        token = page["continuation-token"]


def _ops(events: list[dict]) -> list[tuple[str, str]]:
    def name(op: dict) -> str:
        o = op.get("identifier") or op.get("destination")
        return ".".join(o["namespace"] + [o["name"]]) if o else ".".join(
            op.get("namespace", []))
    return [(e["operation"]["operation-type"], name(e["operation"])) for e in events]


def test_changes_as_iceberg_events(tmp_path: Path) -> None:
    with serving(f"sqlite:///{tmp_path / 'sapwood.db'}", tmp_path) as server:
        http = http_client(base_url=server.base, timeout=30)
        cat = server.catalog()
        cat.create_namespace("sales", {"owner": "ann", "tier": "1"})
        cat.update_namespace_properties("sales", removals={"tier"}, updates={"owner": "bo"})
        t = cat.create_table("sales.t", SCHEMA)
        t.append(pa.table({"id": [1, 2]}, schema=SCHEMA))
        table_uuid = str(t.metadata.table_uuid)
        cat.rename_table("sales.t", "sales.u")
        made = http.post("/iceberg/v1/namespaces/sales/views",
                         json=sb.create_view("v", "SELECT id FROM sales.u"))
        assert made.status_code == 200, made.text
        view_uuid = made.json()["metadata"]["view-uuid"]
        assert http.post("/iceberg/v1/namespaces/sales/views/v", json=sb.replace_view(
            view_uuid, "SELECT id + 1 AS id FROM sales.u")).status_code == 200
        assert http.delete("/iceberg/v1/namespaces/sales/views/v").status_code == 204
        cat.drop_table("sales.u")
        main = http.get("/api/v2/trees/main").json()["reference"]["hash"]
        assert http.post("/api/v2/trees", params={"name": "etl"}, json={
            "type": "BRANCH", "name": "main", "hash": main}).status_code == 200
        etl = server.catalog(ref="etl")
        etl.create_namespace("staging")

        events = _all(http, **{"page-size": 2})
        assert _ops(events) == [
            ("x-sapwood-reference-created", ""),
            ("create-namespace", "sales"),
            ("update-namespace-properties", "sales"),
            ("create-table", "sales.t"),
            ("update-table", "sales.t"),
            ("rename-table", "sales.u"),
            ("create-view", "sales.v"),
            ("replace-view", "sales.v"),
            ("drop-view", "sales.v"),
            ("drop-table", "sales.u")]  # etl's branch and its namespace are not main's
        by_type = {e["operation"]["operation-type"]: e["operation"] for e in events}
        assert by_type["create-namespace"]["properties"] == {"owner": "ann", "tier": "1"}
        assert by_type["update-namespace-properties"]["updated"] == ["owner"]
        assert by_type["update-namespace-properties"]["removed"] == ["tier"]
        assert {by_type[k]["table-uuid"] for k in (
            "create-table", "update-table", "rename-table", "drop-table")} == {table_uuid}
        assert by_type["rename-table"]["source"] == {"namespace": ["sales"], "name": "t"}
        assert {by_type[k]["view-uuid"] for k in (
            "create-view", "replace-view", "drop-view")} == {view_uuid}
        assert by_type["update-table"]["x-sapwood-content"]["summary"]["added-records"] == "2"
        assert all(e["request-event-count"] == 1 and e["event-id"] == f"{e['request-id']}-0"
                   for e in events)
        stamps = [e["timestamp-ms"] for e in events]
        assert stamps == sorted(stamps)
        # The prefix is the reference followed.
        assert _ops(_all(http, "/iceberg/v1/etl/events"))[-1] == ("create-namespace",
                                                                  "staging")
        # Filters.
        tables = _all(http, **{"object-types": ["table"]})
        assert [o for o, _ in _ops(tables)] == ["create-table", "update-table", "rename-table",
                                                "drop-table"]
        assert _ops(_all(http, **{"operation-types": ["drop-view", "drop-table"]})) == [
            ("drop-view", "sales.v"), ("drop-table", "sales.u")]
        assert len(_all(http, **{"catalog-objects-by-id": [{"uuid": view_uuid}]})) == 3
        named = _ops(_all(http, **{"catalog-objects-by-name": [["sales", "t"]]}))
        assert named == [("create-table", "sales.t"), ("update-table", "sales.t"),
                         ("rename-table", "sales.u")]  # a rename is the old name's too
        after = _all(http, **{"after-timestamp-ms": stamps[6]})
        assert _ops(after)[0] == ("create-view", "sales.v") and len(after) == 4
        # A token resumes where a page ended; asked again, nothing new.
        page = http.post("/iceberg/v1/events", json={"page-size": 10}).json()
        again = http.post("/iceberg/v1/events", json={
            "continuation-token": page["continuation-token"]}).json()
        assert again["events"] == [] and again["continuation-token"] == page[
            "continuation-token"]
        assert page["highest-processed-timestamp-ms"] == stamps[-1]
        # Bad requests name the problem.
        for body, says in ((({"custom-filters": {"x": 1}}), "custom-filters"),
                           ({"operation-types": ["explode-table"]}, "explode-table"),
                           ({"object-types": ["index"]}, "index"),
                           ({"continuation-token": "abc"}, "continuation-token"),
                           ({"page-size": 0}, "page-size")):
            r = http.post("/iceberg/v1/events", json=body)
            assert r.status_code == 400 and says in r.text, (body, r.text)
        pinned = http.post(f"/iceberg/v1/main@{main}/events", json={})
        assert pinned.status_code == 400 and "by name" in pinned.text
